/**
 * Quota windows hold across relays (docs/adr/0043), proved on a real cluster on loopback: one ROLE=api process and
 * three ROLE=relay processes behind a round-robin balancer, on Postgres and a Redis of the cluster's own. Bursts of
 * concurrent calls reach all three relays at once; what they admit together is exactly what a window covers, what
 * the window spent is what the consume logs and the balance say, and relays whose clock is moved past the reset
 * (restarted with QUOTA_WINDOW_CLOCK_OFFSET_SECONDS) admit again. The figures go to test-results/cluster-figures.json.
 *
 * Prices: `ModelPrice` of gpt-4o-mini set to $0.001 a call at 500,000 quota a dollar: every call holds and costs 500.
 */
import { createDb, type Database } from '@turnpike/core/db/client';
import { logs, quotaWindowUsage, tokens, users } from '@turnpike/core/db/schema/index';
import { LogType } from '@turnpike/core/domain/logs';
import { generateTokenKey } from '@turnpike/core/domain/tokens';
import { createTokenRepo } from '@turnpike/core/repos/token.repo';
import { createUserRepo } from '@turnpike/core/repos/user.repo';
import { hasRedisServer } from '@turnpike/core/testing/redis-server';
import { type FakeOpenAi, startFakeOpenAi } from '@turnpike/relay/testing/fake-openai';
import { and, asc, eq, like } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Cluster,
  consoleApi,
  recordClusterFigures,
  signInAsRoot,
  startCluster,
} from './testing/cluster.ts';
import { createTestDatabaseUrl, ROOT } from './testing/test-app.ts';

const enabled = Boolean(process.env.TEST_POSTGRES_URL) && hasRedisServer();
const figures: Record<string, unknown> = {};

/** Quota one call holds and costs: $0.001 × 500,000. */
const PER_CALL = 500;

interface Answer {
  readonly status: number;
  readonly body: string;
  readonly headers: Headers;
}

/** The next midnight in UTC after `seconds`, RFC 3339. */
const nextUtcMidnight = (seconds: number) => {
  const day = new Date(seconds * 1000);
  return new Date(Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), day.getUTCDate() + 1))
    .toISOString()
    .replace('.000Z', 'Z');
};

describe.skipIf(!enabled)('quota windows across three relays on one Redis', () => {
  let cluster: Cluster;
  let fake: FakeOpenAi;
  let database: Database;
  let dropDatabase: () => Promise<void>;
  let admin: Record<string, string>;
  const api = consoleApi(
    () => cluster.api.url,
    () => admin,
  );

  /** A user with `quota` and these windows, and a token with its own (set before any relay has loaded them). */
  const payer = async (fields: {
    quota?: number;
    group?: string;
    userWindows?: unknown[];
    tokenWindows?: unknown[];
  }) => {
    const user = await createUserRepo(database.db).insert({
      username: `windows-${Math.random().toString(36).slice(2, 10)}`,
      password: 'not-a-real-hash',
      quota: fields.quota ?? 1_000_000_000,
      group: fields.group ?? 'default',
    });
    if (fields.userWindows)
      await database.db
        .update(users)
        .set({ quotaWindows: fields.userWindows as never })
        .where(eq(users.id, user.id));
    const key = async (windows?: unknown[]) => {
      const token = await createTokenRepo(database.db).insert({
        userId: user.id,
        key: generateTokenKey(),
        name: 'windows',
        remainQuota: 0,
        unlimitedQuota: true,
      });
      if (windows)
        await database.db
          .update(tokens)
          .set({ quotaWindows: windows as never })
          .where(eq(tokens.id, token.id));
      return { id: token.id, key: `sk-${token.key}` };
    };
    return { user, token: await key(fields.tokenWindows), anotherToken: () => key() };
  };

  const call = (key: string): Promise<Answer> =>
    fetch(`${cluster.relayUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello windows' }] }),
    }).then(async (response) => ({
      status: response.status,
      body: await response.text(),
      headers: response.headers,
    }));

  const burst = (n: number, key: string) => Promise.all(Array.from({ length: n }, () => call(key)));
  const served = (answers: readonly Answer[]) => answers.filter((a) => a.status === 200).length;

  /** Waits until the user's consume logs number `count`; their quota in sum. */
  async function loggedQuota(userId: number, count: number): Promise<number> {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const rows = await database.db
        .select({ quota: logs.quota })
        .from(logs)
        .where(and(eq(logs.userId, userId), eq(logs.type, LogType.Consume)));
      if (rows.length >= count || Date.now() > deadline) {
        expect(rows).toHaveLength(count);
        return rows.reduce((sum, row) => sum + row.quota, 0);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** What each slot of the windows whose key starts with `prefix` spent, oldest first. */
  const spent = async (prefix: string) =>
    (
      await database.db
        .select({ amount: quotaWindowUsage.amount })
        .from(quotaWindowUsage)
        .where(like(quotaWindowUsage.windowKey, `${prefix}%`))
        .orderBy(asc(quotaWindowUsage.slotStart))
    ).map((row) => row.amount);

  beforeAll(async () => {
    const created = await createTestDatabaseUrl();
    dropDatabase = created.drop;
    // Answers take a while, so a burst's calls are in flight on every relay together.
    fake = await startFakeOpenAi({ headersDelayMs: 300 });
    // A stopping relay waits this long for the balancer's kept-alive probe connections (the clock test restarts all).
    cluster = await startCluster({
      databaseUrl: created.url as string,
      env: { SHUTDOWN_GRACE_SECONDS: '2' },
    });
    database = await createDb({ url: created.url });
    admin = await signInAsRoot(cluster.api.url, ROOT);
    await api('PUT', '/api/option/', { key: 'ModelPrice', value: JSON.stringify({ 'gpt-4o-mini': 0.001 }) });
    await api('PUT', '/api/option/', {
      key: 'GroupQuotaWindows',
      value: JSON.stringify({ vip: [{ unit: 'requests', limit: 5, period: 'day' }] }),
    });
    await api('POST', '/api/channel/', {
      name: 'fake upstream',
      type: 1,
      key: 'sk-upstream',
      base_url: fake.url,
      models: 'gpt-4o-mini',
      group: 'default,vip',
    });
  }, 180_000);

  afterAll(async () => {
    console.log(`quota window figures\n${JSON.stringify(figures, null, 2)}`);
    recordClusterFigures({ quotaWindows: figures });
    await database?.close();
    await cluster?.close();
    await fake?.close();
    await dropDatabase?.();
  }, 60_000);

  // Made in the first case, called again once the clock has moved.
  let daily: Awaited<ReturnType<typeof payer>>;
  let rolling: Awaited<ReturnType<typeof payer>>;
  let perDay: Awaited<ReturnType<typeof payer>>;

  it('admits exactly 14 of 50 calls at once against a daily window of 7,200, and its spending is what the logs say', async () => {
    // 7,200 covers 14 calls of 500 (7,000), not 15 (7,500).
    daily = await payer({ tokenWindows: [{ unit: 'quota', limit: 7_200, period: 'day' }] });
    const answers = await burst(50, daily.token.key);
    const refused = answers.filter((a) => a.status !== 200);
    figures.dailyWindow = { limit: 7_200, perCall: PER_CALL, calls: 50, served: served(answers) };
    expect(served(answers)).toBe(14);
    const reset = nextUtcMidnight(Date.now() / 1000);
    for (const answer of refused) {
      expect(answer.status).toBe(429);
      expect(JSON.parse(answer.body).error).toMatchObject({
        code: 'quota_window_exceeded',
        type: 'rate_limit_error',
      });
      expect(answer.headers.get('x-turnpike-window')).toBe('token quota:day');
      expect(answer.headers.get('x-turnpike-window-remaining')).toBe('200');
      expect(answer.headers.get('x-turnpike-window-reset')).toBe(reset);
      expect(Number(answer.headers.get('retry-after'))).toBeGreaterThan(0);
    }
    expect(await loggedQuota(daily.user.id, 14)).toBe(7_000);
    expect(await spent(`t:${daily.token.id}|`)).toEqual([7_000]);
    const [row] = await database.db.select().from(users).where(eq(users.id, daily.user.id));
    expect(1_000_000_000 - row!.quota).toBe(7_000);
  }, 60_000);

  it('admits a rolling 5-hour window up to its limit across the relays', async () => {
    // The user's own window: 14 calls of 500 in any 5 hours.
    rolling = await payer({ userWindows: [{ unit: 'quota', limit: 7_200, period: 'rolling', hours: 5 }] });
    const answers = await burst(50, rolling.token.key);
    figures.rollingWindow = { limit: 7_200, hours: 5, calls: 50, served: served(answers) };
    expect(served(answers)).toBe(14);
    const refused = answers.find((a) => a.status === 429);
    expect(refused?.headers.get('x-turnpike-window')).toBe('user quota:5h');
    // Room frees when the bucket of these calls leaves the window: 5 hours on, to the bucket of 5 minutes.
    const freesIn = Number(refused?.headers.get('retry-after'));
    expect(freesIn).toBeGreaterThan(5 * 3_600 - 300 - 60);
    expect(freesIn).toBeLessThanOrEqual(5 * 3_600);
    expect(await loggedQuota(rolling.user.id, 14)).toBe(7_000);
    expect((await spent(`u:${rolling.user.id}|`)).reduce((a, b) => a + b, 0)).toBe(7_000);
  }, 60_000);

  it('admits each user of a group its requests per day, counted across the relays', async () => {
    perDay = await payer({ group: 'vip' });
    const answers = await burst(20, perDay.token.key);
    figures.requestsPerDay = { limit: 5, calls: 20, served: served(answers) };
    expect(served(answers)).toBe(5);
    for (const answer of answers.filter((a) => a.status !== 200))
      expect(answer.headers.get('x-turnpike-window')).toBe('group:vip requests:day');
    await loggedQuota(perDay.user.id, 5);
    expect(await spent(`g:vip:${perDay.user.id}|`)).toEqual([5]);
  }, 60_000);

  it('refuses with whichever of a window and a balance binds, each saying which', async () => {
    // The balance covers 12 calls; the first token's window 5 of them, the second token has none.
    const both = await payer({
      quota: 6_000,
      tokenWindows: [{ unit: 'quota', limit: 2_500, period: 'day' }],
    });
    const plain = await both.anotherToken();
    const first = await burst(20, both.token.key);
    const second = await burst(20, plain.key);
    const last = await call(both.token.key);
    figures.windowAndBalance = {
      balance: 6_000,
      window: 2_500,
      windowedServed: served(first),
      plainServed: served(second),
    };
    expect(served(first)).toBe(5);
    for (const answer of first.filter((a) => a.status !== 200)) {
      expect(answer.status).toBe(429);
      expect(JSON.parse(answer.body).error.code).toBe('quota_window_exceeded');
    }
    expect(served(second)).toBe(7);
    for (const answer of second.filter((a) => a.status !== 200)) {
      expect(answer.status).toBe(403);
      expect(JSON.parse(answer.body).error.code).toBe('insufficient_user_quota');
    }
    expect(last.status).toBe(403);
    expect(JSON.parse(last.body).error.message).toContain(
      "the token's daily quota window cannot cover it either",
    );
    expect(await loggedQuota(both.user.id, 12)).toBe(6_000);
    const [row] = await database.db.select().from(users).where(eq(users.id, both.user.id));
    expect(row!.quota).toBe(0);
  }, 60_000);

  it('admits again on relays whose clock has moved past the reset, each window in a slot of its own', async () => {
    const moved = Date.now();
    await Promise.all(
      cluster.relays.map(async (relay) => {
        await relay.signal('SIGTERM');
        await relay.restart({ QUOTA_WINDOW_CLOCK_OFFSET_SECONDS: String(86_400) });
      }),
    );
    figures.relaysRestartedInSeconds = Number(((Date.now() - moved) / 1000).toFixed(1));
    expect(served(await burst(50, daily.token.key))).toBe(14);
    expect(served(await burst(50, rolling.token.key))).toBe(14);
    expect(served(await burst(20, perDay.token.key))).toBe(5);
    expect(await loggedQuota(daily.user.id, 28)).toBe(14_000);
    expect(await spent(`t:${daily.token.id}|`)).toEqual([7_000, 7_000]);
    await loggedQuota(perDay.user.id, 10);
    expect(await spent(`g:vip:${perDay.user.id}|`)).toEqual([5, 5]);
    expect(await loggedQuota(rolling.user.id, 28)).toBe(14_000);
  }, 120_000);
});
