import { nowSeconds } from '@turnpike/core/repos/log.repo';
import { createQuotaDataRepo, hourOf } from '@turnpike/core/repos/quota-data.repo';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ConsoleClient,
  createTestApp,
  registerUser,
  setupRoot,
  type TestApp,
} from '../../testing/test-app.ts';

interface Row {
  user_id: number;
  username: string;
  model_name: string;
  created_at: number;
  token_used: number;
  count: number;
  quota: number;
}

describe('data dashboard', () => {
  let t: TestApp;
  let root: ConsoleClient;
  let ann: ConsoleClient;
  let bob: ConsoleClient;
  const hour = 3600;
  const day = 24 * hour;
  /** The hour two days ago, so every seeded row sits inside the default ranges. */
  const h0 = hourOf(nowSeconds()) - 2 * day;

  beforeAll(async () => {
    t = await createTestApp();
    root = await setupRoot(t.app);
    ann = await registerUser(t.app, 'ann');
    bob = await registerUser(t.app, 'bob');
    const repo = createQuotaDataRepo(t.runtime.deps.db);
    const annId = ann.userId!;
    const bobId = bob.userId!;
    await repo.addUsage([
      // Two increments inside the same hour fold into one row.
      {
        userId: annId,
        username: 'ann',
        modelName: 'gpt-4o',
        createdAt: h0 + 60,
        tokenUsed: 100,
        count: 1,
        quota: 10,
      },
      {
        userId: annId,
        username: 'ann',
        modelName: 'gpt-4o',
        createdAt: h0 + 1800,
        tokenUsed: 50,
        count: 1,
        quota: 5,
      },
      {
        userId: annId,
        username: 'ann',
        modelName: 'gpt-4o',
        createdAt: h0 + hour,
        tokenUsed: 7,
        count: 1,
        quota: 1,
      },
      {
        userId: bobId,
        username: 'bob',
        modelName: 'gpt-4o',
        createdAt: h0 + 10,
        tokenUsed: 200,
        count: 2,
        quota: 20,
      },
      {
        userId: bobId,
        username: 'bob',
        modelName: 'claude',
        createdAt: h0 + 10,
        tokenUsed: 9,
        count: 1,
        quota: 3,
      },
      // Forty days back: outside a user's allowed span and the default window.
      {
        userId: annId,
        username: 'ann',
        modelName: 'gpt-4o',
        createdAt: h0 - 40 * day,
        tokenUsed: 1,
        count: 1,
        quota: 1,
      },
    ]);
    // A later flush adds to the existing bucket.
    await repo.addUsage([
      {
        userId: annId,
        username: 'ann',
        modelName: 'gpt-4o',
        createdAt: h0 + 5,
        tokenUsed: 1,
        count: 1,
        quota: 1,
      },
    ]);
  });
  afterAll(async () => {
    await t.close();
  });

  it("gives an admin everyone's usage summed per model and hour", async () => {
    const response = await root.get(`/api/data/?start_timestamp=${h0}&end_timestamp=${h0 + day}`);
    expect(response.statusCode).toBe(200);
    const rows = response.json().data as Row[];
    expect(rows.map((r) => [r.model_name, r.created_at, r.token_used, r.count, r.quota])).toEqual([
      ['claude', h0, 9, 1, 3],
      ['gpt-4o', h0, 351, 5, 36],
      ['gpt-4o', h0 + hour, 7, 1, 1],
    ]);
    expect(rows.every((r) => r.user_id === 0 && r.username === '')).toBe(true);
  });

  it("gives an admin one user's rows by username", async () => {
    const rows = (
      await root.get(`/api/data/?username=bob&start_timestamp=${h0}&end_timestamp=${h0 + day}`)
    ).json().data as Row[];
    expect(rows.map((r) => [r.username, r.model_name, r.quota])).toEqual([
      ['bob', 'claude', 3],
      ['bob', 'gpt-4o', 20],
    ]);
    const longAgo = (
      await root.get(`/api/data/?username=ann&start_timestamp=0&end_timestamp=${h0 - day}`)
    ).json().data as Row[];
    expect(longAgo.map((r) => r.created_at)).toEqual([h0 - 40 * day]);
  });

  it('looks back the default window when no start is given', async () => {
    // DataExportDefaultTime defaults to "hour": one day back, which leaves out the rows of two days ago.
    expect((await root.get('/api/data/')).json().data).toEqual([]);
    expect(
      (await root.put('/api/option/', { key: 'DataExportDefaultTime', value: 'week' })).json().success,
    ).toBe(true);
    const rows = (await root.get('/api/data/?username=ann')).json().data as Row[];
    expect(rows.map((r) => r.created_at)).toEqual([h0, h0 + hour]);
    await root.put('/api/option/', { key: 'DataExportDefaultTime', value: 'hour' });
  });

  it('shows a user only their own usage', async () => {
    const rows = (await ann.get(`/api/data/self?start_timestamp=${h0}&end_timestamp=${h0 + day}`)).json()
      .data as Row[];
    expect(rows.map((r) => [r.username, r.created_at, r.token_used, r.count, r.quota])).toEqual([
      ['ann', h0, 151, 3, 16],
      ['ann', h0 + hour, 7, 1, 1],
    ]);
    // Admin-only filters are not honoured on the own view.
    const asBob = (
      await ann.get(`/api/data/self?username=bob&start_timestamp=${h0}&end_timestamp=${h0 + day}`)
    ).json().data as Row[];
    expect(asBob.every((r) => r.username === 'ann')).toBe(true);
    const bobs = (await bob.get(`/api/data/self?start_timestamp=${h0}&end_timestamp=${h0 + day}`)).json()
      .data as Row[];
    expect(bobs.map((r) => r.model_name)).toEqual(['claude', 'gpt-4o']);
  });

  it('refuses a span over 30 days, a reversed range and bad numbers', async () => {
    const tooLong = await ann.get(
      `/api/data/self?start_timestamp=${h0 - 40 * day}&end_timestamp=${h0 + day}`,
    );
    expect(tooLong.statusCode).toBe(400);
    expect(tooLong.json()).toMatchObject({
      success: false,
      message: 'the time range may span at most 30 days',
    });
    const reversed = await root.get(`/api/data/?start_timestamp=${h0 + day}&end_timestamp=${h0}`);
    expect(reversed.statusCode).toBe(400);
    expect(reversed.json().message).toBe('start_timestamp must not be after end_timestamp');
    const bad = await ann.get('/api/data/self?end_timestamp=tomorrow');
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toBe('end_timestamp must be a Unix time in seconds');
  });

  it('keeps the admin view from regular users and visitors', async () => {
    expect((await ann.get('/api/data/')).statusCode).toBe(403);
    expect((await ann.get('/api/data')).statusCode).toBe(403);
    expect((await t.app.inject({ method: 'GET', url: '/api/data/' })).statusCode).toBe(401);
    expect((await t.app.inject({ method: 'GET', url: '/api/data/self' })).statusCode).toBe(401);
  });

  it('answers that the dashboard is off when DataExportEnabled is false', async () => {
    expect((await root.put('/api/option/', { key: 'DataExportEnabled', value: false })).json().success).toBe(
      true,
    );
    for (const [client, url] of [
      [root, '/api/data/'],
      [ann, '/api/data/self'],
    ] as const) {
      const response = await client.get(url);
      expect(response.statusCode).toBe(403);
      expect(response.json()).toMatchObject({
        success: false,
        code: 'FEATURE_DISABLED',
        message: 'the data dashboard is turned off (DataExportEnabled)',
      });
    }
    await root.put('/api/option/', { key: 'DataExportEnabled', value: true });
    expect((await ann.get('/api/data/self')).json().success).toBe(true);
  });
});
