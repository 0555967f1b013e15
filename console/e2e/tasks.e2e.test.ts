/**
 * The drawing log (/midjourney) and the task log (/task) in real headless Chromium, filled by real traffic: an
 * all-in-one server with a Midjourney-Proxy and a Suno channel (fake upstreams speaking their wire formats), an API
 * token that submits two drawings and two Suno tasks, the upstreams finishing one of each and failing the other,
 * and the server's own poller bringing the rows up to date. The pages show each task's status, the failure reason,
 * and the finished drawing's image as the gateway proxies it; the failed tasks' prices are back in the balance.
 */
import {
  type FakeMidjourney,
  type FakeSuno,
  startFakeMidjourney,
  startFakeSuno,
} from '@turnpike/relay/testing/fake-task-upstreams';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiClient, eventually, ROOT, setOption, setUp, signIn } from './api.ts';
import { en, watchErrors } from './checks.ts';
import {
  buildConsoleIfStale,
  launchBrowser,
  newContext,
  type RunningServer,
  startServer,
} from './harness.ts';

const MJ_KEY = 'mj-e2e-secret';
const SUNO_KEY = 'suno-e2e-key';
const START_QUOTA = 5_000_000;
/** Default prices (USD per call) × QuotaPerUnit, group ratio 1. */
const IMAGINE = 0.1 * 500_000;
const MUSIC = 0.1 * 500_000;

interface DrawingRow {
  mj_id: string;
  status: string;
  fail_reason: string;
  image_url: string;
}
interface TaskRow {
  task_id: string;
  status: string;
  fail_reason: string;
}

describe('drawing and task logs with relayed tasks', () => {
  let server: RunningServer;
  let browser: Browser;
  let mj: FakeMidjourney;
  let suno: FakeSuno;
  let api: ApiClient;
  let tokenKey = '';
  const made = { drawn: '', drawFailed: '', song: '', lyricsFailed: '' };

  async function post(path: string, headers: Record<string, string>, body: unknown) {
    const response = await fetch(`${server.baseUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    return (await response.json()) as Record<string, unknown>;
  }

  beforeAll(async () => {
    buildConsoleIfStale();
    [server, mj, suno, browser] = await Promise.all([
      startServer(),
      startFakeMidjourney(MJ_KEY),
      startFakeSuno(SUNO_KEY),
      launchBrowser(),
    ]);
    await setUp(server.baseUrl, ROOT);
    api = await signIn(server.baseUrl, ROOT);
    await setOption(api, 'ServerAddress', server.baseUrl);
    for (const channel of [
      { name: 'fake-midjourney', type: 2, key: MJ_KEY, base_url: mj.url, models: 'mj_imagine' },
      { name: 'fake-suno', type: 36, key: SUNO_KEY, base_url: suno.url, models: 'suno_music,suno_lyrics' },
    ])
      await api.ok('POST', '/api/channel/', { ...channel, group: 'default' });
    await api.ok('POST', '/api/token/', {
      name: 'tasks',
      remain_quota: 0,
      expired_time: -1,
      unlimited_quota: true,
    });
    tokenKey =
      (await api.ok<{ items: { key: string }[] }>('GET', '/api/token/?p=1&size=10')).items[0]?.key ?? '';
    const [code] = await api.ok<string[]>('POST', '/api/redemption/', {
      name: 'tasks',
      quota: START_QUOTA,
      count: 1,
    });
    await api.ok('POST', '/api/user/topup', { key: code });

    // Two drawings and two Suno tasks, submitted as clients do (mj-api-secret, Bearer).
    const imagine = () =>
      post('/mj/submit/imagine', { 'mj-api-secret': tokenKey }, { prompt: 'a toll booth at night' });
    made.drawn = String(
      (await eventually(imagine, (a) => a.code === 1, { what: 'an accepted drawing' })).result,
    );
    made.drawFailed = String((await imagine()).result);
    const music = await post(
      '/suno/submit/music',
      { authorization: `Bearer ${tokenKey}` },
      { prompt: 'a song about toll roads' },
    );
    const lyrics = await post(
      '/suno/submit/lyrics',
      { authorization: `Bearer ${tokenKey}` },
      { prompt: 'verses' },
    );
    made.song = String(music.data);
    made.lyricsFailed = String(lyrics.data);
    expect([music.code, lyrics.code]).toEqual(['success', 'success']);

    mj.succeed(made.drawn);
    mj.fail(made.drawFailed, 'Banned prompt detected');
    suno.succeed(made.song);
    suno.fail(made.lyricsFailed, 'lyrics generation failed');
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await Promise.all([server?.stop(), mj?.close(), suno?.close()]);
  });

  it('the poller brings the rows up to date and refunds the failed tasks', async () => {
    // The server polls every 15 s.
    const drawings = await eventually(
      async () => (await api.ok<{ items: DrawingRow[] } | DrawingRow[]>('GET', '/api/mj/self')) as unknown,
      (data) => {
        const rows = (Array.isArray(data) ? data : (data as { items: DrawingRow[] }).items) as DrawingRow[];
        return rows.filter((row) => row.status === 'SUCCESS' || row.status === 'FAILURE').length === 2;
      },
      { timeoutMs: 45_000, what: 'both drawings finished' },
    );
    const drawingRows = (
      Array.isArray(drawings) ? drawings : (drawings as { items: DrawingRow[] }).items
    ) as DrawingRow[];
    expect(drawingRows.find((row) => row.mj_id === made.drawn)?.image_url).toBe(
      `${server.baseUrl}/mj/image/${made.drawn}`,
    );
    await eventually(
      async () => (await api.ok<unknown>('GET', '/api/task/self')) as unknown,
      (data) => {
        const rows = (Array.isArray(data) ? data : (data as { items: TaskRow[] }).items) as TaskRow[];
        return rows.filter((row) => row.status === 'SUCCESS' || row.status === 'FAILURE').length === 2;
      },
      { timeoutMs: 45_000, what: 'both Suno tasks finished' },
    );
    const self = await eventually(
      () => api.ok<{ quota: number }>('GET', '/api/user/self'),
      (user) => user.quota === START_QUOTA - IMAGINE - MUSIC,
      { what: 'the failed tasks refunded' },
    );
    expect(self.quota).toBe(START_QUOTA - IMAGINE - MUSIC);
  }, 120_000);

  async function signedInPage(): Promise<{ page: Page; errors: string[] }> {
    const context = await newContext(browser, server.baseUrl, { language: 'en', theme: 'light' });
    const page = await context.newPage();
    const errors = watchErrors(page);
    await page.goto('/login');
    await page.locator('input[name=username]').fill(ROOT.username);
    await page.locator('input[name=password]').fill(ROOT.password);
    await page.getByRole('button', { name: en('common', 'auth.login'), exact: true }).click();
    await page.waitForURL('**/token');
    return { page, errors };
  }

  it('shows both drawings in the drawing log, the finished one with its proxied image', async () => {
    const { page, errors } = await signedInPage();
    await page.goto('/midjourney');
    await page.getByRole('heading', { name: en('tasks', 'drawing.title') }).waitFor();
    const done = page.locator('tr', { has: page.getByText(made.drawn, { exact: true }) });
    const failed = page.locator('tr', { has: page.getByText(made.drawFailed, { exact: true }) });
    await done.getByText(en('tasks', 'status.success'), { exact: true }).waitFor();
    await failed.getByText(en('tasks', 'status.failure'), { exact: true }).waitFor();
    await failed.getByText('Banned prompt detected').waitFor();
    const image = done.locator('img');
    await image.waitFor();
    expect(await image.getAttribute('src')).toBe(`${server.baseUrl}/mj/image/${made.drawn}`);
    await expect
      .poll(() => image.evaluate((img) => (img as HTMLImageElement).naturalWidth), { timeout: 10_000 })
      .toBeGreaterThan(0);
    expect(errors).toEqual([]);
    await page.context().close();
  }, 60_000);

  it('shows the Suno tasks in the task log with their status and failure reason', async () => {
    const { page, errors } = await signedInPage();
    await page.goto('/task');
    await page.getByRole('heading', { name: en('tasks', 'task.title') }).waitFor();
    const song = page.locator('tr', { has: page.getByText(made.song, { exact: true }) });
    const lyrics = page.locator('tr', { has: page.getByText(made.lyricsFailed, { exact: true }) });
    await song.getByText(en('tasks', 'status.success'), { exact: true }).waitFor();
    await song.getByText(en('tasks', 'action.MUSIC'), { exact: true }).waitFor();
    await lyrics.getByText(en('tasks', 'status.failure'), { exact: true }).waitFor();
    await lyrics.getByText('lyrics generation failed').waitFor();
    expect(errors).toEqual([]);
    await page.context().close();
  }, 60_000);
});
