import { logs } from '@turnpike/core/db/schema/index';
import { LogType } from '@turnpike/core/domain/logs';
import {
  createLogRepo,
  LOG_COUNT_CAP,
  LOG_SEARCH_COUNT_CAP,
  splitRange,
} from '@turnpike/core/repos/log.repo';
import { and, eq, gte, like, lte, type SQL, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleClient, createTestApp, setupRoot, type TestApp } from '../../testing/test-app.ts';

const HOUR = 3600;
/** A fixed hour far in the past, so nothing the test does not write falls in its ranges. */
const H0 = 1_700_000_000 - (1_700_000_000 % HOUR);

/** The log queries of issue 28 (docs/adr/0031): totals from the sums and the edges, capped counts, the search. */
describe('usage logs at scale', () => {
  let t: TestApp;
  let root: ConsoleClient;

  /** The quota of consume logs under the conditions, summed over the logs themselves: what the totals must equal. */
  async function truth(...conditions: (SQL | undefined)[]): Promise<number> {
    const [row] = await t.runtime.deps.db
      .select({ quota: sql<number>`coalesce(sum(${logs.quota}), 0)`.mapWith(Number) })
      .from(logs)
      .where(and(eq(logs.type, LogType.Consume), ...conditions));
    return row?.quota ?? 0;
  }

  /** A table of sums and the consume logs grouped the same way (by its key), as sorted text, to compare whole. */
  async function sumsAndLogs(table: 'log_hours' | 'log_days', span: number): Promise<[string[], string[]]> {
    const db = t.runtime.deps.db;
    const key =
      table === 'log_hours'
        ? 'user_id, username, model_name'
        : 'user_id, username, model_name, token_name, channel_id, "group"';
    const keys = async (query: string) =>
      ((await db.execute(sql.raw(query))) as unknown as { rows: { key: string }[] }).rows
        .map((row) => row.key)
        .sort();
    return [
      await keys(`select concat_ws(' ', ${key}, created_at, count, quota, tokens) as key from ${table}`),
      await keys(`select concat_ws(' ', ${key}, created_at - created_at % ${span}, count(*), sum(quota),
          sum(prompt_tokens + completion_tokens)) as key
        from logs where type = 2 group by ${key}, created_at - created_at % ${span}`),
    ];
  }

  /** Both tables of sums equal the logs. */
  async function expectSumsOfLogs(): Promise<string[]> {
    const [hours, hourly] = await sumsAndLogs('log_hours', HOUR);
    expect(hours).toEqual(hourly);
    const [days, daily] = await sumsAndLogs('log_days', 86_400);
    expect(days).toEqual(daily);
    return hours;
  }

  beforeAll(async () => {
    // Hundreds of console calls from one address: the per-IP limit of the API is not under test here.
    t = await createTestApp({ env: { GLOBAL_API_RATE_LIMIT_ENABLE: 'false' } });
    root = await setupRoot(t.app);
    const repo = createLogRepo(t.runtime.deps.db);
    // Consume logs on and around the hour boundaries of five hours, by two users and three models; an error log,
    // a top-up and a log of another token in the same hours, which the totals must leave out or filter.
    const offsets = [
      0, 1, 1799, 3599, 3600, 3601, 7199, 7200, 10_000, 14_399, 14_400, 17_999, 93_599, 93_600, 180_001,
    ];
    let n = 0;
    for (const offset of offsets) {
      for (const [userId, username] of [
        [101, 'uma'],
        [102, 'vic'],
      ] as const) {
        n += 1;
        await repo.insert({
          userId,
          username,
          type: LogType.Consume,
          modelName: ['gpt-4o', 'gpt-4o-mini', 'claude'][n % 3] as string,
          tokenName: n % 4 === 0 ? 'side' : 'main',
          channelId: 1 + (n % 2),
          group: n % 5 === 0 ? 'vip' : 'default',
          quota: 1000 + n,
          promptTokens: n,
          completionTokens: 2 * n,
          createdAt: H0 + offset,
        });
      }
    }
    await repo.insert({ userId: 101, username: 'uma', type: LogType.Error, quota: 7, createdAt: H0 + 1 });
    await repo.insert({
      userId: 101,
      username: 'uma',
      type: LogType.TopUp,
      quota: 500_000,
      createdAt: H0 + 2,
    });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('splits a range into whole days, whole hours and the seconds at its ends, each second once', () => {
    const D0 = H0 + 2 * HOUR; // the start of a UTC day
    expect(D0 % 86_400).toBe(0);
    expect(splitRange(D0 - HOUR + 5, D0 + 86_400 + 2 * HOUR + 9)).toEqual({
      days: [{ from: D0, to: D0 + 86_400 }],
      hours: [{ from: D0 + 86_400, to: D0 + 86_400 + 2 * HOUR }],
      seconds: [
        { from: D0 - HOUR + 5, to: D0 },
        { from: D0 + 86_400 + 2 * HOUR, to: D0 + 86_400 + 2 * HOUR + 10 },
      ],
    });
    expect(splitRange(H0, H0 + 3 * HOUR - 1)).toEqual({
      days: [],
      hours: [{ from: H0, to: H0 + 3 * HOUR }],
      seconds: [],
    });
    expect(splitRange(H0 + 1, H0 + 10)).toEqual({
      days: [],
      hours: [],
      seconds: [{ from: H0 + 1, to: H0 + 11 }],
    });
    expect(splitRange(undefined, H0 + 1)).toEqual({
      days: [{ to: D0 - 86_400 }],
      hours: [{ from: D0 - 86_400, to: H0 }],
      seconds: [{ from: H0, to: H0 + 2 }],
    });
    expect(splitRange(D0 + 1, undefined)).toEqual({
      days: [{ from: D0 + 86_400 }],
      hours: [{ from: D0 + HOUR, to: D0 + 86_400 }],
      seconds: [{ from: D0 + 1, to: D0 + HOUR }],
    });
    expect(splitRange(undefined, undefined)).toEqual({ days: [{}], hours: [], seconds: [] });
  });

  it('sums the same quota as the logs for every range, whole hours or partial, under each filter', async () => {
    const points = [H0 - 1, H0, H0 + 1, H0 + 1799, H0 + 3599, H0 + 3600, H0 + 3601, H0 + 7200, H0 + 14_399];
    // H0 + 7200 starts a UTC day: ends a day and more later cover whole days.
    const ends = [
      H0,
      H0 + 1,
      H0 + 3599,
      H0 + 3600,
      H0 + 7199,
      H0 + 10_000,
      H0 + 14_400,
      H0 + 93_599,
      H0 + 97_200,
      H0 + 180_001,
    ];
    const filters: [string, SQL | undefined][] = [
      ['', undefined],
      ['&username=uma', eq(logs.username, 'uma')],
      ['&model_name=gpt-4o', like(logs.modelName, 'gpt-4o')],
      ['&model_name=gpt-4o%25', like(logs.modelName, 'gpt-4o%')],
      ['&token_name=side', eq(logs.tokenName, 'side')],
      ['&channel=2', eq(logs.channelId, 2)],
      ['&group=vip&model_name=gpt-4o%25', and(eq(logs.group, 'vip'), like(logs.modelName, 'gpt-4o%'))],
    ];
    let checked = 0;
    for (const [query, condition] of filters) {
      for (const start of points) {
        for (const end of ends) {
          if (end < start) continue;
          const answer = await root.get(
            `/api/log/stat?type=0&start_timestamp=${start}&end_timestamp=${end}${query}`,
          );
          const expected = await truth(condition, gte(logs.createdAt, start), lte(logs.createdAt, end));
          expect({ start, end, query, quota: answer.json().data.quota }).toEqual({
            start,
            end,
            query,
            quota: expected,
          });
          checked += expected > 0 ? 1 : 0;
        }
      }
    }
    expect(checked).toBeGreaterThan(100);
    // Open ends, and a user's own totals.
    const all = (await root.get(`/api/log/stat?start_timestamp=${H0 + 1}`)).json().data.quota;
    expect(all).toBe(await truth(gte(logs.createdAt, H0 + 1)));
    const upTo = (await root.get(`/api/log/stat?end_timestamp=${H0 + 7198}`)).json().data.quota;
    expect(upTo).toBe(await truth(lte(logs.createdAt, H0 + 7198)));
  });

  it('keeps log_hours and log_days equal to the consume logs through inserts, updates, deletes and a truncate', async () => {
    const db = t.runtime.deps.db;
    expect((await expectSumsOfLogs()).length).toBeGreaterThan(10);
    // An edit of a row's type or quota moves it in or out of the sums.
    await db
      .update(logs)
      .set({ type: LogType.Error })
      .where(eq(logs.createdAt, H0 + 3599));
    await db
      .update(logs)
      .set({ quota: sql`${logs.quota} * 2` })
      .where(eq(logs.createdAt, H0 + 1));
    await expectSumsOfLogs();
    // Retention deletes in batches; an hour whose logs are all gone leaves no row behind.
    await createLogRepo(db).deleteBefore(H0 + 3601);
    const hours = await expectSumsOfLogs();
    expect(hours.some((key) => key.includes(` ${H0} `))).toBe(false);
    const stat = (
      await root.get(`/api/log/stat?start_timestamp=${H0 - HOUR}&end_timestamp=${H0 + 9 * 86_400}`)
    ).json();
    expect(stat.data.quota).toBe(await truth());
    await db.execute(sql`truncate logs`);
    expect(await expectSumsOfLogs()).toEqual([]);
    expect((await root.get('/api/log/stat')).json().data.quota).toBe(0);
  });

  it('counts a page exactly up to the cap and estimates past it, newest first by creation time', async () => {
    const db = t.runtime.deps.db;
    const base = H0 + 100 * HOUR;
    // One more row than the cap, of one token; then two rows created at the same second, and an older row
    // written after them (a relay's late flush): creation time orders the page, the id only breaks ties.
    await db.execute(
      sql.raw(`insert into logs (user_id, username, type, token_name, model_name, quota, created_at)
        select 103, 'wes', 2, 'bulk', 'gpt-4o', 1, ${base} + g from generate_series(1, ${LOG_COUNT_CAP + 1}) g`),
    );
    const repo = createLogRepo(db);
    const top = base + LOG_COUNT_CAP + 10;
    await repo.insert({
      userId: 104,
      username: 'xan',
      type: LogType.Consume,
      tokenName: 'a',
      createdAt: top,
    });
    await repo.insert({
      userId: 104,
      username: 'xan',
      type: LogType.Consume,
      tokenName: 'b',
      createdAt: top,
    });
    await repo.insert({
      userId: 104,
      username: 'xan',
      type: LogType.Consume,
      tokenName: 'c',
      createdAt: top - 1,
    });
    await db.execute(sql`analyze logs`);

    const bulk = (await root.get('/api/log/?p=1&page_size=10&token_name=bulk')).json().data;
    expect(bulk.items).toHaveLength(10);
    expect(bulk.total).toBeGreaterThan(LOG_COUNT_CAP);
    // The planner's estimate, about the real count (10,001), not a count of it.
    expect(bulk.total).toBeLessThan(3 * (LOG_COUNT_CAP + 1));
    const newest = bulk.items.map((row: { created_at: number }) => row.created_at);
    expect(newest[0]).toBe(base + LOG_COUNT_CAP + 1);
    expect(newest).toEqual([...newest].sort((a, b) => b - a));

    const under = (
      await root.get(`/api/log/?p=1&page_size=10&token_name=bulk&end_timestamp=${base + 500}`)
    ).json();
    expect(under.data.total).toBe(500);
    const last = (
      await root.get(`/api/log/?p=50&page_size=10&token_name=bulk&end_timestamp=${base + 500}`)
    ).json();
    expect(last.data.items.map((row: { created_at: number }) => row.created_at)).toEqual(
      Array.from({ length: 10 }, (_, i) => base + 10 - i),
    );

    // The search counts up to its own, lower cap.
    const searched = (await root.get('/api/log/search?keyword=BULK&p=1&page_size=10')).json().data;
    expect(searched.items).toHaveLength(10);
    expect(searched.total).toBeGreaterThan(LOG_SEARCH_COUNT_CAP);
    expect((await root.get('/api/log/search?keyword=xan')).json().data.total).toBe(3);

    const xan = (await root.get('/api/log/?p=1&page_size=10&username=xan')).json().data;
    expect(xan.total).toBe(3);
    expect(xan.items.map((row: { token_name: string }) => row.token_name)).toEqual(['b', 'a', 'c']);
  });

  it('searches the four fields through the trigram index, never across two of them', async () => {
    const repo = createLogRepo(t.runtime.deps.db);
    const row = { userId: 105, type: LogType.Error, createdAt: H0 + 200 * HOUR };
    await repo.insert({
      ...row,
      username: 'yara',
      tokenName: 'tok-ZEBRA',
      modelName: 'orca-1',
      content: 'quiet',
    });
    await repo.insert({
      ...row,
      username: 'zed',
      tokenName: 'plain',
      modelName: 'm',
      content: 'loud zebra noise',
    });
    const found = async (keyword: string) =>
      (await root.get(`/api/log/search?keyword=${encodeURIComponent(keyword)}`))
        .json()
        .data.items.map((item: { username: string }) => item.username)
        .sort();
    expect(await found('zebra')).toEqual(['yara', 'zed']);
    expect(await found('RCA-')).toEqual(['yara']);
    expect(await found('ara')).toEqual(['yara']);
    // The end of one field and the start of the next are not one text.
    expect(await found('quietorca')).toEqual([]);
    expect(await found('quiet\u0001orca')).toEqual([]);
    expect(await found('50%')).toEqual([]);

    const plan = await t.runtime.deps.db.transaction(async (tx) => {
      await tx.execute(sql`set local enable_seqscan = off`);
      await tx.execute(sql`set local enable_indexscan = off`);
      const result = await tx.execute(
        sql`explain select id from logs where (content || chr(1) || model_name || chr(1) || token_name || chr(1) || username) ilike '%zebra%'`,
      );
      return (result as unknown as { rows: Record<string, string>[] }).rows
        .map((line) => Object.values(line)[0])
        .join('\n');
    });
    expect(plan).toContain('idx_logs_search_trgm');
  });

  it('reads a page of another type than consume off the partial type index, its value a bound parameter', async () => {
    const db = t.runtime.deps.db;
    const newestFirst = (type: number) =>
      db
        .select({ id: logs.id })
        .from(logs)
        .where(eq(logs.type, type))
        .orderBy(sql`${logs.createdAt} desc, ${logs.id} desc`)
        .limit(10);
    const planOf = (type: number) =>
      db.transaction(async (tx) => {
        await tx.execute(sql`set local enable_seqscan = off`);
        const result = await tx.execute(sql`explain ${newestFirst(type)}`);
        return (result as unknown as { rows: Record<string, string>[] }).rows
          .map((line) => Object.values(line)[0])
          .join('\n');
      });
    expect(await planOf(LogType.Error)).toContain('idx_logs_other_types_created_at');
    // Consume logs are not in it: their filter reads the (created_at, type) index.
    expect(await planOf(LogType.Consume)).not.toContain('idx_logs_other_types_created_at');
    const errors = (await root.get('/api/log/?p=1&page_size=100&type=5')).json().data;
    const [expected] = await db
      .select({ n: sql<number>`count(*)`.mapWith(Number) })
      .from(logs)
      .where(eq(logs.type, LogType.Error));
    expect(errors.total).toBe(expected?.n);
    expect(errors.items.every((item: { type: number }) => item.type === LogType.Error)).toBe(true);
  });
});
