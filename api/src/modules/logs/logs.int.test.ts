import { channels, logs } from '@turnpike/core/db/schema/index';
import { LogType } from '@turnpike/core/domain/logs';
import { createLogRepo, nowSeconds } from '@turnpike/core/repos/log.repo';
import { createTokenRepo } from '@turnpike/core/repos/token.repo';
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ConsoleClient,
  createTestApp,
  registerUser,
  setupRoot,
  type TestApp,
} from '../../testing/test-app.ts';

/** `other` as the relay writes it: billing details plus the admin-only routing details. */
const OTHER = JSON.stringify({
  model_ratio: 15,
  completion_ratio: 4,
  group_ratio: 1,
  frt: 812.5,
  is_model_mapped: true,
  upstream_model_name: 'gpt-4o-2024-08-06',
  admin_info: { use_channel: ['7', '8'] },
});

describe('usage logs', () => {
  let t: TestApp;
  let root: ConsoleClient;
  let ann: ConsoleClient;
  let bob: ConsoleClient;
  let channelId: number;
  const now = nowSeconds();
  /** Seeded rows sit in the past so that the stat's 60-second window only sees the rows made for it. */
  const day = 24 * 3600;
  const t0 = now - 10 * day;

  beforeAll(async () => {
    t = await createTestApp();
    root = await setupRoot(t.app);
    ann = await registerUser(t.app, 'ann');
    bob = await registerUser(t.app, 'bob');
    const db = t.runtime.deps.db;
    const [channel] = await db
      .insert(channels)
      .values({ name: 'primary-openai', key: 'sealed', type: 1 })
      .returning({ id: channels.id });
    channelId = channel!.id;
    const repo = createLogRepo(db);
    const consume = {
      type: LogType.Consume,
      content: 'model ratio 15.00, completion ratio 4.00, group ratio 1.00',
      other: OTHER,
      channelId,
    };
    await repo.insert({
      ...consume,
      userId: ann.userId!,
      username: 'ann',
      tokenName: 'ann-main',
      modelName: 'gpt-4o',
      group: 'default',
      quota: 1000,
      promptTokens: 10,
      completionTokens: 20,
      createdAt: t0,
    });
    await repo.insert({
      ...consume,
      userId: ann.userId!,
      username: 'ann',
      tokenName: 'ann-side',
      modelName: 'claude-3-5-sonnet',
      group: 'vip',
      quota: 3000,
      promptTokens: 30,
      completionTokens: 40,
      createdAt: t0 + day,
    });
    await repo.insert({
      userId: ann.userId!,
      username: 'ann',
      type: LogType.TopUp,
      content: 'redeemed a code worth $2.00',
      quota: 1_000_000,
      createdAt: t0 + 2 * day,
    });
    await repo.insert({
      ...consume,
      userId: bob.userId!,
      username: 'bob',
      tokenName: 'bob-secret-project',
      modelName: 'gpt-4o-mini',
      group: 'default',
      quota: 500,
      promptTokens: 5,
      completionTokens: 5,
      createdAt: t0 + 3 * day,
      channelId: 0,
    });
  });
  afterAll(async () => {
    await t.close();
  });

  it('lists every log for an admin, newest first, with the channel name and the whole `other`', async () => {
    const response = await root.get('/api/log/?p=1&page_size=100');
    expect(response.statusCode).toBe(200);
    const page = response.json().data;
    const seeded = page.items.filter((row: { username: string }) => ['ann', 'bob'].includes(row.username));
    expect(seeded.map((row: { model_name: string }) => row.model_name)).toEqual([
      'gpt-4o-mini',
      '',
      'claude-3-5-sonnet',
      'gpt-4o',
    ]);
    const annFirst = seeded.at(-1);
    expect(annFirst).toMatchObject({ channel: channelId, channel_name: 'primary-openai', quota: 1000 });
    expect(JSON.parse(annFirst.other)).toMatchObject({ admin_info: { use_channel: ['7', '8'] } });
    expect(page).toMatchObject({ page: 1, page_size: 100 });
    expect(page.total).toBe(page.items.length);
  });

  it('applies each admin filter', async () => {
    const ids = async (query: string) =>
      (await root.get(`/api/log/?${query}`))
        .json()
        .data.items.map((row: { token_name: string }) => row.token_name);
    expect(await ids('username=ann&type=2')).toEqual(['ann-side', 'ann-main']);
    expect(await ids('token_name=bob-secret-project')).toEqual(['bob-secret-project']);
    expect(await ids('model_name=gpt-4o')).toEqual(['ann-main']);
    expect(await ids('model_name=gpt-4o%25')).toEqual(['bob-secret-project', 'ann-main']);
    expect(await ids(`start_timestamp=${t0 + day}&end_timestamp=${t0 + day}`)).toEqual(['ann-side']);
    expect(await ids(`channel=${channelId}&type=2`)).toEqual(['ann-side', 'ann-main']);
    expect(await ids('group=vip')).toEqual(['ann-side']);
    expect(await ids('type=1&username=ann')).toEqual(['']);
    // Blank filters, as the console sends untouched fields, do not filter.
    expect((await ids('username=ann&token_name=&model_name=&group=&channel=&type=')).length).toBe(3);
  });

  it('pages from 1 with the total of every matching row', async () => {
    const first = (await root.get('/api/log/?username=ann&p=1&page_size=2')).json().data;
    const second = (await root.get('/api/log/?username=ann&p=2&page_size=2')).json().data;
    expect(first).toMatchObject({ total: 3, page: 1, page_size: 2 });
    expect(first.items).toHaveLength(2);
    expect(second.items).toHaveLength(1);
    expect(second.items[0].id).not.toBe(first.items[0].id);
  });

  it('refuses bad filters with a clear message', async () => {
    const badType = await root.get('/api/log/?type=9');
    expect(badType.statusCode).toBe(400);
    expect(badType.json()).toMatchObject({ success: false, message: 'type must be one of 0, 1, 2, 3, 4, 5' });
    const badTime = await root.get('/api/log/?start_timestamp=yesterday');
    expect(badTime.statusCode).toBe(400);
    expect(badTime.json().message).toBe('start_timestamp must be a Unix time in seconds');
    const badChannel = await root.get('/api/log/stat?channel=-1');
    expect(badChannel.statusCode).toBe(400);
  });

  it('shows a user only their own logs, without the channel or the admin-only parts of `other`', async () => {
    const response = await ann.get('/api/log/self/?p=1&page_size=50');
    expect(response.statusCode).toBe(200);
    const items = response.json().data.items;
    expect(items.map((row: { username: string }) => row.username)).toEqual(['ann', 'ann', 'ann']);
    expect(response.body).not.toContain('bob-secret-project');
    for (const row of items) {
      expect(row).not.toHaveProperty('channel');
      expect(row).not.toHaveProperty('channel_name');
    }
    const consumed = items.find((row: { token_name: string }) => row.token_name === 'ann-main');
    const other = JSON.parse(consumed.other);
    expect(other).toEqual({ model_ratio: 15, completion_ratio: 4, group_ratio: 1, frt: 812.5 });
    expect(response.body).not.toContain('admin_info');
    expect(response.body).not.toContain('upstream_model_name');
    expect(response.body).not.toContain('primary-openai');
  });

  it("ignores a user's attempt to filter by another user or channel", async () => {
    const response = await ann.get(`/api/log/self?username=bob&channel=${channelId}`);
    const names = response.json().data.items.map((row: { username: string }) => row.username);
    expect(names).toEqual(['ann', 'ann', 'ann']);
    const bobs = (await bob.get('/api/log/self/')).json().data;
    expect(bobs.total).toBe(1);
    expect(bobs.items[0]).toMatchObject({ token_name: 'bob-secret-project', quota: 500 });
  });

  it('searches by keyword: an admin over everyone, a user over their own rows', async () => {
    const admin = (await root.get('/api/log/search?keyword=SECRET')).json().data;
    expect(admin.items.map((row: { username: string }) => row.username)).toEqual(['bob']);
    expect(admin.items[0]).toHaveProperty('channel');
    const own = (await ann.get('/api/log/self/search?keyword=secret')).json().data;
    expect(own).toMatchObject({ items: [], total: 0 });
    const annOwn = (await ann.get('/api/log/self/search?keyword=claude')).json().data;
    expect(annOwn.items.map((row: { model_name: string }) => row.model_name)).toEqual(['claude-3-5-sonnet']);
    expect(annOwn.items[0].other).not.toContain('admin_info');
    // A LIKE wildcard in the keyword is matched as typed.
    expect((await root.get('/api/log/search?keyword=%25')).json().data.total).toBe(0);
    const empty = await root.get('/api/log/search?keyword=');
    expect(empty.statusCode).toBe(400);
    expect(empty.json()).toMatchObject({ success: false, message: 'enter a keyword to search for' });
  });

  it('sums the quota under the filters and counts requests and tokens of the last minute', async () => {
    const repo = createLogRepo(t.runtime.deps.db);
    const base = { type: LogType.Consume, modelName: 'gpt-4o', group: 'default' };
    await repo.insert({
      ...base,
      userId: ann.userId!,
      username: 'ann',
      tokenName: 'ann-live',
      quota: 70,
      promptTokens: 100,
      completionTokens: 50,
      createdAt: nowSeconds() - 5,
    });
    await repo.insert({
      ...base,
      userId: bob.userId!,
      username: 'bob',
      tokenName: 'bob-live',
      quota: 30,
      promptTokens: 7,
      completionTokens: 3,
      createdAt: nowSeconds() - 5,
    });
    const everyone = (await root.get('/api/log/stat')).json().data;
    expect(everyone).toEqual({ quota: 1000 + 3000 + 500 + 70 + 30, rpm: 2, tpm: 160 });
    const annOnly = (await root.get('/api/log/stat?username=ann')).json().data;
    expect(annOnly).toEqual({ quota: 1000 + 3000 + 70, rpm: 1, tpm: 150 });
    const older = (await root.get(`/api/log/stat?end_timestamp=${t0 + day}`)).json().data;
    expect(older).toEqual({ quota: 4000, rpm: 0, tpm: 0 });
    const own = (await bob.get('/api/log/self/stat?username=ann')).json().data;
    expect(own).toEqual({ quota: 530, rpm: 1, tpm: 10 });
    const modelOwn = (await ann.get('/api/log/self/stat?model_name=claude-3-5-sonnet')).json().data;
    expect(modelOwn).toEqual({ quota: 3000, rpm: 0, tpm: 0 });
  });

  it('keeps the admin calls from regular users', async () => {
    const calls: [string, string][] = [
      ['GET', '/api/log/'],
      ['GET', '/api/log'],
      ['GET', '/api/log/stat'],
      ['GET', '/api/log/search?keyword=ann'],
      ['DELETE', `/api/log/?target_timestamp=${now + day}`],
    ];
    for (const [method, url] of calls) {
      const response = await ann.request(method as 'GET', url);
      expect(response.statusCode, `${method} ${url}`).toBe(403);
      expect(response.json().success).toBe(false);
      const anonymous = await t.app.inject({ method: method as 'GET', url });
      expect(anonymous.statusCode, `${method} ${url} signed out`).toBe(401);
    }
    expect((await t.app.inject({ method: 'GET', url: '/api/log/self' })).statusCode).toBe(401);
    // Nothing was deleted by the refused call.
    expect((await root.get('/api/log/?username=ann')).json().data.total).toBe(4);
  });

  it('deletes logs created before a time and answers the count', async () => {
    const missing = await root.delete('/api/log/');
    expect(missing.statusCode).toBe(400);
    expect(missing.json().message).toBe('target_timestamp is required: a Unix time in seconds');
    const bad = await root.delete('/api/log/?target_timestamp=soon');
    expect(bad.statusCode).toBe(400);

    const before = await t.runtime.deps.db.select({ id: logs.id }).from(logs);
    const response = await root.delete(`/api/log/?target_timestamp=${t0 + day + 1}`);
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ success: true, data: 2 });
    const after = await t.runtime.deps.db.select({ id: logs.id }).from(logs);
    expect(after).toHaveLength(before.length - 2);
    const left = await t.runtime.deps.db.select().from(logs).where(eq(logs.username, 'ann'));
    expect(left.map((row) => row.tokenName).sort()).toEqual(['', 'ann-live']);
  });
});

describe('the usage of one key', () => {
  let t: TestApp;
  let key: string;
  let otherKey: string;
  beforeAll(async () => {
    t = await createTestApp();
    await setupRoot(t.app);
    const ann = await registerUser(t.app, 'ann');
    const db = t.runtime.deps.db;
    const tokenRepo = createTokenRepo(db);
    const mine = await tokenRepo.insert({ userId: ann.userId!, key: 'a'.repeat(48), name: 'scripts' });
    const other = await tokenRepo.insert({ userId: ann.userId!, key: 'b'.repeat(48), name: 'other' });
    key = `sk-${mine.key}`;
    otherKey = `sk-${other.key}`;
    const repo = createLogRepo(db);
    for (const [tokenId, quota] of [
      [mine.id, 10],
      [mine.id, 20],
      [other.id, 99],
    ] as const)
      await repo.insert({
        type: LogType.Consume,
        userId: ann.userId!,
        username: 'ann',
        tokenId,
        quota,
        other: OTHER,
        content: 'call',
      });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('answers the logs of the key it is given, to any origin, without the admin details', async () => {
    const byQuery = await t.app.inject({ method: 'GET', url: `/api/log/token?key=${key}` });
    expect(byQuery.statusCode).toBe(200);
    expect(byQuery.headers['access-control-allow-origin']).toBe('*');
    const rows = byQuery.json().data as { quota: number; other: string }[];
    expect(rows.map((r) => r.quota)).toEqual([20, 10]);
    expect(rows[0]?.other).not.toContain('admin_info');
    const byHeader = await t.app.inject({
      method: 'GET',
      url: '/api/log/token',
      headers: { authorization: `Bearer ${otherKey}` },
    });
    expect(byHeader.json().data.map((r: { quota: number }) => r.quota)).toEqual([99]);
  });

  it('refuses a missing or unknown key in the envelope', async () => {
    const missing = await t.app.inject({ method: 'GET', url: '/api/log/token' });
    expect(missing.statusCode).toBe(400);
    expect(missing.json()).toMatchObject({ success: false });
    const unknown = await t.app.inject({ method: 'GET', url: `/api/log/token?key=sk-${'c'.repeat(48)}` });
    expect(unknown.statusCode).toBe(401);
    expect(unknown.json()).toMatchObject({ success: false, message: 'invalid API key' });
  });
});

describe('the console at scale', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('finds the rows of a model filter with a wildcard through an index, whatever the collation', async () => {
    // Forbidding sequential scans shows whether an index can serve the condition at all, on a table of any size.
    // Under a collation other than C (C.UTF-8, en_US.UTF-8) a btree of the default operators serves `like 'gpt-4%'`
    // only as a filter; one of varchar_pattern_ops bounds it.
    const plan = await t.runtime.deps.db.transaction(async (tx) => {
      await tx.execute(sql`set local enable_seqscan = off`);
      const result = await tx.execute(
        sql`explain select count(*) from logs where model_name like 'gpt-4%' and created_at >= 0`,
      );
      return (result as unknown as { rows: Record<string, string>[] }).rows
        .map((row) => Object.values(row)[0])
        .join('\n');
    });
    expect(plan).toMatch(/Index Cond: .*model_name/);
  });
});
