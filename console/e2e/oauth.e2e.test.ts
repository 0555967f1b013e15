/**
 * Third-party sign-in in real headless Chromium against a fresh all-in-one server whose GitHub is the fake
 * identity provider (GitHub's token and profile wire format). The browser's trip to github.com is answered here
 * the way GitHub answers an approved request: a redirect back to the console's /oauth/github with a code and the
 * state it was sent. What this proves beyond the unit tests: the session cookie (same-site only) carries the
 * state and the signed-in user through the provider's redirect, the callback page signs the new user in, and a
 * signed-in user's trip binds instead.
 */
import {
  FAKE_CLIENT,
  type FakeIdentityProvider,
  startFakeIdentityProvider,
} from '@turnpike/api/testing/fake-identity-provider';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiClient, ROOT, setOption, setUp, signIn } from './api.ts';
import { en, watchErrors } from './checks.ts';
import {
  buildConsoleIfStale,
  launchBrowser,
  newContext,
  type RunningServer,
  startServer,
} from './harness.ts';

interface UserRow {
  id: number;
  username: string;
  display_name: string;
  github_id: string;
}

describe('third-party sign-in in a real browser', () => {
  let server: RunningServer;
  let idp: FakeIdentityProvider;
  let browser: Browser;
  let api: ApiClient;

  /** A browser context where github.com approves at once, answering with `login`'s code. */
  async function contextApprovingAs(login: string, name: string): Promise<BrowserContext> {
    const context = await newContext(browser, server.baseUrl, { language: 'en', theme: 'light' });
    await context.route('https://github.com/**', async (route) => {
      const asked = new URL(route.request().url());
      expect(asked.pathname).toBe('/login/oauth/authorize');
      expect(asked.searchParams.get('client_id')).toBe(FAKE_CLIENT.id);
      const code = `code-${login}`;
      idp.issue(code, { login, id: login.length, name });
      const back = `${server.baseUrl}/oauth/github?code=${code}&state=${asked.searchParams.get('state')}`;
      await route.fulfill({ status: 302, headers: { location: back } });
    });
    return context;
  }

  const users = async () => (await api.ok<{ items: UserRow[] }>('GET', '/api/user/?p=1&page_size=100')).items;

  beforeAll(async () => {
    buildConsoleIfStale();
    idp = await startFakeIdentityProvider();
    [server, browser] = await Promise.all([
      startServer({ GITHUB_OAUTH_URL: idp.url, GITHUB_API_URL: idp.url }),
      launchBrowser(),
    ]);
    await setUp(server.baseUrl, ROOT);
    api = await signIn(server.baseUrl, ROOT);
    await setOption(api, 'GitHubClientId', FAKE_CLIENT.id);
    await setOption(api, 'GitHubClientSecret', FAKE_CLIENT.secret);
    await setOption(api, 'GitHubOAuthEnabled', 'true');
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await idp?.close();
  });

  it('registers and signs in a new user with GitHub', async () => {
    const context = await contextApprovingAs('octo-e2e', 'E2E Octo');
    const page: Page = await context.newPage();
    const errors = watchErrors(page);
    await page.goto(`${server.baseUrl}/login`);
    await page.getByRole('button', { name: en('common', 'auth.withGitHub') }).click();
    await page.waitForURL(`${server.baseUrl}/token`);
    const stored = JSON.parse((await page.evaluate(() => localStorage.getItem('user'))) ?? 'null');
    expect(stored.username).toMatch(/^github_\d+$/);
    expect(stored.display_name).toBe('E2E Octo');
    const row = (await users()).find((u) => u.id === stored.id);
    expect(row?.github_id).toBe('octo-e2e');
    expect(errors).toEqual([]);
    await context.close();
  }, 60_000);

  it('binds GitHub to the signed-in user from the personal settings', async () => {
    const context = await contextApprovingAs('octo-root', 'Root Octo');
    const page = await context.newPage();
    const errors = watchErrors(page);
    await page.goto(`${server.baseUrl}/login`);
    await page.locator('input[name=username]').fill(ROOT.username);
    await page.locator('input[name=password]').fill(ROOT.password);
    await page.getByRole('button', { name: en('common', 'auth.login'), exact: true }).click();
    await page.waitForURL(/\/(token|personal)$/);
    await page.goto(`${server.baseUrl}/personal`);
    await page
      .getByRole('button', { name: en('personal', 'binding.bindProvider', { name: 'GitHub' }) })
      .click();
    await page.waitForURL(`${server.baseUrl}/personal`);
    await expect
      .poll(async () => (await users()).find((u) => u.id === api.userId)?.github_id, { timeout: 10_000 })
      .toBe('octo-root');
    await page.getByText(`GitHub: octo-root`).waitFor();
    expect(errors).toEqual([]);
    await context.close();
  }, 60_000);
});
