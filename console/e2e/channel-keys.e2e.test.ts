/**
 * A multi-key channel in real headless Chromium against a fresh all-in-one server (docs/adr/0027): the admin opens
 * the channel, sees each key masked with its state, disables one and deletes the disabled keys after confirming;
 * the server's key state follows, the relay then serves only with the remaining keys, and no key reaches the page.
 */
import { type FakeOpenAi, startFakeOpenAi } from '@turnpike/relay/testing/fake-openai';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiClient, chatCompletion, ROOT, setOption, setUp, signIn } from './api.ts';
import { en, watchErrors } from './checks.ts';
import {
  buildConsoleIfStale,
  launchBrowser,
  newContext,
  type RunningServer,
  startServer,
} from './harness.ts';

const KEYS = ['sk-e2e-pool-first-000000001', 'sk-e2e-pool-second-00000002', 'sk-e2e-pool-third-000000003'];

describe('a multi-key channel in a real browser', () => {
  let server: RunningServer;
  let browser: Browser;
  let upstream: FakeOpenAi;
  let api: ApiClient;
  let page: Page;
  let errors: string[];
  let channelId = 0;

  beforeAll(async () => {
    buildConsoleIfStale();
    [server, upstream, browser] = await Promise.all([startServer(), startFakeOpenAi({}), launchBrowser()]);
    await setUp(server.baseUrl, ROOT);
    api = await signIn(server.baseUrl, ROOT);
    await setOption(api, 'ModelRatio', JSON.stringify({ 'gpt-4o-mini': 1 }));
    const [created] = await api.ok<{ id: number }[]>('POST', '/api/channel/', {
      mode: 'multi_to_single',
      multi_key_mode: 'polling',
      channel: { name: 'pool', type: 1, key: KEYS.join('\n'), base_url: upstream.url, models: 'gpt-4o-mini' },
    });
    channelId = created?.id ?? 0;
    const context = await newContext(browser, server.baseUrl, { language: 'en', theme: 'light' });
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
    await Promise.all([server?.stop(), upstream?.close()]);
  });

  it('shows the keys masked, disables one and deletes the disabled keys after confirming', async () => {
    await page.goto('/channel');
    const row = page.getByTestId(`channel-${channelId}`);
    await row.getByText(en('channels', 'keys.badge', { count: 3 })).waitFor();
    await row.getByRole('button', { name: en('channels', 'action.editOf', { name: 'pool' }) }).click();
    const panel = page.getByTestId('channel-keys');
    await panel.getByText(en('channels', 'keys.summary', { total: 3, enabled: 3, disabled: 0 })).waitFor();

    await panel.getByRole('button', { name: en('channels', 'keys.disableOf', { index: 2 }) }).click();
    await panel.getByText(en('channels', 'keys.summary', { total: 3, enabled: 2, disabled: 1 })).waitFor();
    const info = (
      await api.ok<{ channel_info: { multi_key_status_list: Record<string, number> } }>(
        'GET',
        `/api/channel/${channelId}`,
      )
    ).channel_info;
    expect(info.multi_key_status_list).toEqual({ 1: 2 });

    await panel.getByRole('button', { name: en('channels', 'keys.deleteDisabled') }).click();
    const confirm = page.getByRole('dialog', { name: en('channels', 'keys.confirm.delete_disabled_keys') });
    await confirm.getByRole('button', { name: en('common', 'common.confirm') }).click();
    await panel.getByText(en('channels', 'keys.summary', { total: 2, enabled: 2, disabled: 0 })).waitFor();

    // The relay serves with the two keys left, in turn.
    await api.ok('POST', '/api/token/', {
      name: 'pool',
      remain_quota: 0,
      expired_time: -1,
      unlimited_quota: true,
    });
    const tokenKey = (await api.ok<{ items: { key: string }[] }>('GET', '/api/token/?p=1&size=10')).items[0]
      ?.key;
    const [code] = await api.ok<string[]>('POST', '/api/redemption/', {
      name: 'pool',
      quota: 5_000_000,
      count: 1,
    });
    await api.ok('POST', '/api/user/topup', { key: code });
    const before = upstream.requests.length;
    for (let i = 0; i < 4; i += 1) {
      const answer = await chatCompletion(server.baseUrl, tokenKey ?? '', {
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'which key?' }],
      });
      expect(answer.status).toBe(200);
    }
    const used = upstream.requests
      .slice(before)
      .filter((r) => r.path === '/v1/chat/completions')
      .map((r) => r.headers.authorization);
    expect([...new Set(used)].sort()).toEqual([`Bearer ${KEYS[0]}`, `Bearer ${KEYS[2]}`]);

    const html = await page.content();
    for (const key of KEYS) expect(html).not.toContain(key);
    expect(errors).toEqual([]);
  });
});
