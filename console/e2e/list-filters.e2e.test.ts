/**
 * The list pages keep their filters in the address (issue 30, the list-page kit), in real headless Chromium
 * against a fresh all-in-one server: a search survives a reload, Back returns to it after leaving the page and
 * to the filters before it, and a copied link opens the same list in another tab, all the way to the server's
 * answer. Tokens (a keyword), users (a keyword and a group) and the usage log (type and model) are each checked.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiClient, ROOT, setUp, signIn } from './api.ts';
import { en, watchErrors } from './checks.ts';
import {
  buildConsoleIfStale,
  launchBrowser,
  newContext,
  type RunningServer,
  startServer,
} from './harness.ts';

const TOKENS = ['alpha-laptop', 'beta-server', 'beta-ci'];

describe('list filters in the address, in a real browser', () => {
  let server: RunningServer;
  let browser: Browser;
  let api: ApiClient;
  let context: BrowserContext;
  let page: Page;
  let errors: string[];

  const tokenNames = async (p: Page) =>
    (await p.locator('tbody tr td:nth-child(2)').allInnerTexts()).map((s) => s.trim()).sort();
  /** Waits until the token table shows exactly these names. */
  const expectTokens = async (p: Page, names: string[]) => {
    const want = [...names].sort();
    await expect.poll(() => tokenNames(p), { timeout: 10_000 }).toEqual(want);
  };
  const keywordInput = (p: Page) => p.getByLabel(en('tokens', 'search.keyword'));

  beforeAll(async () => {
    buildConsoleIfStale();
    [server, browser] = await Promise.all([startServer(), launchBrowser()]);
    await setUp(server.baseUrl, ROOT);
    api = await signIn(server.baseUrl, ROOT);
    for (const name of TOKENS) {
      await api.ok('POST', '/api/token/', {
        name,
        remain_quota: 500000,
        expired_time: -1,
        unlimited_quota: false,
      });
    }
    for (const [username, group] of [
      ['ann-vip', 'vip'],
      ['ann-plain', 'default'],
      ['bob-vip', 'vip'],
    ] as const) {
      await api.ok('POST', '/api/user/', { username, password: 'user-pass-12', display_name: username });
      const found = await api.ok<{ items: { id: number; username: string }[] }>(
        'GET',
        `/api/user/search?keyword=${username}&p=1&page_size=10`,
      );
      const id = found.items.find((u) => u.username === username)?.id;
      const user = await api.ok<Record<string, unknown>>('GET', `/api/user/${id}`);
      await api.ok('PUT', '/api/user/', { ...user, group, password: '' });
    }

    context = await newContext(browser, server.baseUrl, { language: 'en', theme: 'light' });
    page = await context.newPage();
    errors = watchErrors(page);
    await page.goto('/login');
    await page.locator('input[name=username]').fill(ROOT.username);
    await page.locator('input[name=password]').fill(ROOT.password);
    await page.getByRole('button', { name: en('common', 'auth.login'), exact: true }).click();
    await page.waitForURL('**/token');
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('keeps a token search through a reload, Back and a copied link', async () => {
    await expectTokens(page, TOKENS);
    await keywordInput(page).fill('beta');
    await page.getByRole('button', { name: en('tokens', 'search.submit') }).click();
    await page.waitForURL(/\/token\?keyword=beta$/);
    await expectTokens(page, ['beta-server', 'beta-ci']);

    await page.reload();
    await expectTokens(page, ['beta-server', 'beta-ci']);
    expect(await keywordInput(page).inputValue()).toBe('beta');

    // a second search, then Back: the first one again, in the form and in the table
    await keywordInput(page).fill('alpha');
    await page.getByRole('button', { name: en('tokens', 'search.submit') }).click();
    await expectTokens(page, ['alpha-laptop']);
    await page.goBack();
    await page.waitForURL(/\/token\?keyword=beta$/);
    await expectTokens(page, ['beta-server', 'beta-ci']);
    expect(await keywordInput(page).inputValue()).toBe('beta');

    // leave for another page through the menu, come Back
    await page.goto('/log');
    await page.getByRole('heading', { name: en('logs', 'title') }).waitFor();
    await page.goBack();
    await expectTokens(page, ['beta-server', 'beta-ci']);

    // the copied link in another tab of the same session
    const link = page.url();
    const other = await context.newPage();
    await other.goto(link);
    await expectTokens(other, ['beta-server', 'beta-ci']);
    expect(await keywordInput(other).inputValue()).toBe('beta');
    await other.close();
    expect(errors).toEqual([]);
  });

  it('keeps the user search and group filter of a link through a reload', async () => {
    await page.goto('/user?keyword=ann&group=vip');
    const names = () =>
      page
        .locator('tbody tr')
        .allInnerTexts()
        .then((rows) => rows.map((r) => r.split('\t')[1]?.trim().split(' ')[0]).sort());
    await expect.poll(names, { timeout: 10_000 }).toEqual(['ann-vip']);
    expect(await page.getByLabel(en('users', 'search.group')).inputValue()).toBe('vip');
    await page.getByLabel(en('users', 'search.group')).selectOption('');
    await page.getByRole('button', { name: en('users', 'search.submit') }).click();
    await expect.poll(names, { timeout: 10_000 }).toEqual(['ann-plain', 'ann-vip']);
    await page.reload();
    await expect.poll(names, { timeout: 10_000 }).toEqual(['ann-plain', 'ann-vip']);
    expect(await page.getByLabel(en('users', 'search.keyword')).inputValue()).toBe('ann');
    await page.goBack();
    await expect.poll(names, { timeout: 10_000 }).toEqual(['ann-vip']);
    expect(errors).toEqual([]);
  });

  it('opens the usage log with the type and model of a link, and asks the server for exactly those', async () => {
    const asked: string[] = [];
    page.on('request', (request) => {
      if (request.url().includes('/api/log/?')) asked.push(request.url());
    });
    await page.goto('/log?type=3&model_name=gpt-4o');
    await page.getByRole('heading', { name: en('logs', 'title') }).waitFor();
    expect(await page.getByLabel(en('logs', 'filter.model')).inputValue()).toBe('gpt-4o');
    expect(await page.getByLabel(en('logs', 'filter.type')).inputValue()).toBe('3');
    await expect.poll(() => asked.length, { timeout: 10_000 }).toBeGreaterThan(0);
    const query = new URL(asked.at(-1) ?? '').searchParams;
    expect(query.get('type')).toBe('3');
    expect(query.get('model_name')).toBe('gpt-4o');
    expect(errors).toEqual([]);
  });
});
