/**
 * Many relay processes, one truth (docs/adr/0016), proved on a real cluster on loopback: one ROLE=api process,
 * three ROLE=relay processes behind a round-robin balancer, Postgres and a Redis of the cluster's own. Needs
 * TEST_POSTGRES_URL and a `redis-server` on the machine. The figures (propagation p50/p99, overdraft, crash drift,
 * 5xx during a Redis outage) are printed at the end and written to test-results/cluster-figures.json.
 */
import { createDb, type Database } from '@turnpike/core/db/client';
import { logs, users } from '@turnpike/core/db/schema/index';
import { generateTokenKey } from '@turnpike/core/domain/tokens';
import { createTokenRepo } from '@turnpike/core/repos/token.repo';
import { createUserRepo } from '@turnpike/core/repos/user.repo';
import { hasRedisServer } from '@turnpike/core/testing/redis-server';
import { type FakeOpenAi, startFakeOpenAi } from '@turnpike/relay/testing/fake-openai';
import { eq, sql } from 'drizzle-orm';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Cluster,
  consoleApi,
  recordClusterFigures,
  signInAsRoot,
  startCluster,
} from './testing/cluster.ts';
import { createTestDatabaseUrl, ROOT } from './testing/test-app.ts';

const PRICE = 500_000; // $1 per call of `paid-model` (QuotaPerUnit 500000)
const OUTAGE_SECONDS = Number(process.env.CLUSTER_REDIS_OUTAGE_SECONDS ?? 30);
const enabled = Boolean(process.env.TEST_POSTGRES_URL) && hasRedisServer();

const figures: Record<string, unknown> = {};

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

const isJson = (text: string): boolean => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

async function until<T>(read: () => Promise<T | undefined>, ms = 20_000, every = 20): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, every));
  }
}

describe.skipIf(!enabled)('a cluster of one api and three relays on Postgres and Redis', () => {
  let cluster: Cluster;
  let fake: FakeOpenAi;
  let database: Database;
  let dropDatabase: () => Promise<void>;
  let redis: Redis;
  let admin: Record<string, string>;

  /** An /api call as root, with the access token scripts use. */
  const api = consoleApi(
    () => cluster.api.url,
    () => admin,
  );

  /** The `ModelPrice` map as the tests last set it. */
  const priced: Record<string, number> = { 'paid-model': 1, 'brand-new-model': 0.001 };

  const payer = async (quota: number) => {
    const user = await createUserRepo(database.db).insert({
      username: `cluster-${Math.random().toString(36).slice(2, 10)}`,
      password: 'not-a-real-hash',
      quota,
    });
    const token = await createTokenRepo(database.db).insert({
      userId: user.id,
      key: generateTokenKey(),
      name: 'cluster',
      remainQuota: 0,
      unlimitedQuota: true,
    });
    return { user, key: `sk-${token.key}` };
  };

  const call = (url: string, key: string, model: string, stream: boolean, signal?: AbortSignal) =>
    fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, stream, messages: [{ role: 'user', content: 'hello cluster' }] }),
      ...(signal ? { signal } : {}),
    }).then(async (response) => ({
      status: response.status,
      body: await response.text(),
      headers: response.headers,
    }));

  /** What the database says a user paid: the balance drop, the logs, and the counters. */
  const books = async (userId: number, start: number) => {
    const [row] = await database.db.select().from(users).where(eq(users.id, userId));
    const [logged] = await database.db
      .select({
        quota: sql<number>`coalesce(sum(${logs.quota}), 0)`.mapWith(Number),
        count: sql<number>`count(*)`.mapWith(Number),
      })
      .from(logs)
      .where(eq(logs.userId, userId));
    return {
      deducted: start - (row?.quota ?? 0),
      logged: logged?.quota ?? 0,
      logs: logged?.count ?? 0,
      usedQuota: row?.usedQuota ?? 0,
      requestCount: row?.requestCount ?? 0,
    };
  };
  /** The books once the writers have flushed (the logs stop growing). */
  const settledBooks = async (userId: number, start: number) => {
    let previous = -1;
    return until(
      async () => {
        const now = await books(userId, start);
        if (now.logs === previous) return now;
        previous = now.logs;
        return undefined;
      },
      30_000,
      1_500,
    );
  };
  const outstanding = async (userId: number) =>
    Number((await redis.get(`${cluster.keyPrefix}{ledger}:out:u:${userId}`)) ?? 0);

  beforeAll(async () => {
    const created = await createTestDatabaseUrl();
    dropDatabase = created.drop;
    fake = await startFakeOpenAi({});
    // No periodic reload within the test (an hour): a change reaches a relay by the event bus or not at all.
    cluster = await startCluster({ databaseUrl: created.url as string, env: { SYNC_FREQUENCY: '3600' } });
    database = await createDb({ url: created.url });
    redis = new Redis(cluster.redis.url, { maxRetriesPerRequest: 1 });
    redis.on('error', () => {});
    // First-run setup and an access token, as a script of the reference would do it.
    admin = await signInAsRoot(cluster.api.url, ROOT);
    await api('PUT', '/api/option/', { key: 'ModelPrice', value: JSON.stringify({ 'paid-model': 1 }) });
    await api('PUT', '/api/option/', { key: 'ModelRatio', value: JSON.stringify({ 'gpt-4o-mini': 0.075 }) });
    await api('POST', '/api/channel/', {
      name: 'fake upstream',
      type: 1,
      key: 'sk-upstream',
      base_url: fake.url,
      models: 'paid-model,gpt-4o-mini',
      group: 'default',
    });
  }, 180_000);

  afterAll(async () => {
    console.log(`cluster figures\n${JSON.stringify(figures, null, 2)}`);
    recordClusterFigures(figures);
    redis?.disconnect();
    await database?.close();
    await cluster?.close();
    await fake?.close();
    await dropDatabase?.();
  }, 60_000);

  it('applies an /api write in every relay within a second at p99', async () => {
    const { key } = await payer(100 * PRICE);
    const latencies: number[] = [];
    for (let i = 0; i < 40; i += 1) {
      const sent = Date.now();
      await api('PUT', '/api/option/', {
        key: 'ModelRatio',
        value: JSON.stringify({ 'gpt-4o-mini': 0.075 + i / 1000 }),
      });
      const version = Number(await redis.get(`${cluster.keyPrefix}config-version`));
      const applied = await until(
        async () => {
          const keys = await redis.keys(`${cluster.keyPrefix}presence:relay:*`);
          const presences = (await Promise.all(keys.map((k) => redis.get(k))))
            .filter((v): v is string => v !== null)
            .map((v) => JSON.parse(v) as { applied: number; at: number });
          return presences.length >= cluster.relays.length && presences.every((p) => p.applied >= version)
            ? presences
            : undefined;
        },
        5_000,
        5,
      );
      latencies.push(Math.max(...applied.map((p) => p.at - sent), 0));
    }
    // A channel created through /api is routable on every relay as soon as they report it applied.
    const sent = Date.now();
    await api('POST', '/api/channel/', {
      name: 'new channel',
      type: 1,
      key: 'sk-upstream',
      base_url: fake.url,
      models: 'brand-new-model',
      group: 'default',
    });
    await api('PUT', '/api/option/', { key: 'ModelPrice', value: JSON.stringify(priced) });
    for (const relay of cluster.relays) {
      await until(
        async () =>
          (await call(relay.url, key, 'brand-new-model', false)).status === 200 ? true : undefined,
        5_000,
        5,
      );
    }
    figures.propagation = {
      writes: latencies.length,
      p50Ms: percentile(latencies, 50),
      p99Ms: percentile(latencies, 99),
      maxMs: Math.max(...latencies),
      channelCreateToServedOnAllRelaysMs: Date.now() - sent,
    };
    expect(percentile(latencies, 99)).toBeLessThanOrEqual(1000);
  });

  it('never serves more than a balance across three relays under 300 concurrent calls', async () => {
    const start = 20 * PRICE;
    const { user, key } = await payer(start);
    const answers = await Promise.all(
      Array.from({ length: 300 }, (_, i) => call(cluster.relayUrl, key, 'paid-model', i % 2 === 1)),
    );
    const served = answers.filter((a) => a.status === 200);
    const refused = answers.filter((a) => a.status !== 200);
    for (const a of refused) expect(a.status).toBe(403);
    const result = await settledBooks(user.id, start);
    figures.overdraft = {
      requests: answers.length,
      served: served.length,
      balanceCovered: 20,
      overdraft: Math.max(0, served.length - 20),
      ...result,
    };
    expect(served.length * PRICE).toBeLessThanOrEqual(start);
    expect(served.length).toBe(20);
    expect(result.deducted).toBe(served.length * PRICE);
    expect(result.logged).toBe(result.deducted);
    expect(result.usedQuota).toBe(result.deducted);
    expect(result.requestCount).toBe(served.length);
    await until(async () => ((await outstanding(user.id)) === 0 ? true : undefined));
  });

  it('holds a shared request rate limit to its total across the three relays', async () => {
    await api('PUT', '/api/option/', { key: 'ModelRequestRateLimitCount', value: '12' });
    await api('PUT', '/api/option/', { key: 'ModelRequestRateLimitEnabled', value: 'true' });
    try {
      const { key } = await payer(1000 * PRICE);
      const answers = await Promise.all(
        Array.from({ length: 36 }, () => call(cluster.relayUrl, key, 'gpt-4o-mini', false)),
      );
      const served = answers.filter((a) => a.status === 200).length;
      const limited = answers.filter((a) => a.status === 429);
      figures.rateLimit = { limit: 12, requests: answers.length, served, refused429: limited.length };
      expect(served).toBe(12);
      expect(limited).toHaveLength(24);
      for (const a of limited) {
        expect(Number(a.headers.get('retry-after'))).toBeGreaterThan(0);
        expect(a.headers.get('x-ratelimit-limit')).toBe('12');
        expect(a.headers.get('x-ratelimit-remaining')).toBe('0');
        expect(a.headers.get('x-ratelimit-reset')).toBeTruthy();
      }
    } finally {
      await api('PUT', '/api/option/', { key: 'ModelRequestRateLimitEnabled', value: 'false' });
    }
  });

  it('lets streams in flight finish and bills them when a relay is told to stop', async () => {
    const start = 100 * PRICE;
    const { user, key } = await payer(start);
    const relay = cluster.relays[0]!;
    fake.setBehaviour({ chunkDelayMs: 150 });
    try {
      const streams = Array.from({ length: 8 }, () => call(relay.url, key, 'paid-model', true));
      await until(async () => (fake.requests.length > 0 ? true : undefined));
      await new Promise((resolve) => setTimeout(resolve, 300));
      relay.inRotation = false;
      const exit = relay.signal('SIGTERM');
      const answers = await Promise.all(streams);
      expect(await exit).toBe(0);
      for (const a of answers) {
        expect(a.status).toBe(200);
        expect(a.body.trimEnd().endsWith('data: [DONE]')).toBe(true);
      }
      const result = await settledBooks(user.id, start);
      figures.sigterm = { streams: answers.length, completed: answers.length, exitCode: 0, ...result };
      expect(result.logs).toBe(answers.length);
      expect(result.deducted).toBe(answers.length * PRICE);
      expect(result.logged).toBe(result.deducted);
    } finally {
      fake.setBehaviour({ chunkDelayMs: 0 });
      if (!relay.child()) await relay.restart();
    }
  });

  it('after a SIGKILL under load and a restart, charges and logs agree and no hold stays taken', async () => {
    const start = 1000 * PRICE;
    const { user, key } = await payer(start);
    const victim = cluster.relays[1]!;
    fake.setBehaviour({ headersDelayMs: 20 });
    /** Complete answers (a stream up to `data: [DONE]`), 200s cut short by the kill, and the rest. */
    let ok = 0;
    let cut = 0;
    let failed = 0;
    try {
      const load = Array.from({ length: 12 }, async () => {
        for (let i = 0; i < 25; i += 1) {
          const stream = i % 2 === 0;
          const answer = await call(cluster.relayUrl, key, 'paid-model', stream).catch(() => undefined);
          const complete = stream
            ? answer?.body.trimEnd().endsWith('data: [DONE]')
            : isJson(answer?.body ?? '');
          if (answer?.status === 200 && complete) ok += 1;
          else if (answer?.status === 200) cut += 1;
          else failed += 1;
        }
      });
      await until(async () => (ok >= 40 ? true : undefined));
      await victim.signal('SIGKILL');
      await Promise.all(load);
    } finally {
      fake.setBehaviour({ headersDelayMs: 0 });
    }
    await victim.restart();
    // What stays held once the cluster has written the dead relay's journal (0 when every hold is released); read
    // until it is 0 or 30 s have passed, then asserted, so a stuck hold fails with its amount. The journal is
    // written only once the dead relay's lease runs out (10 s), so the books are read after this, not before.
    const heldAfter = async () => {
      const deadline = Date.now() + 30_000;
      for (;;) {
        const held = await outstanding(user.id);
        if (held === 0 || Date.now() > deadline) return held;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    };
    const stillHeld = await heldAfter();
    const result = await settledBooks(user.id, start);
    figures.sigkill = {
      answered200: ok,
      cutByTheKill: cut,
      failed,
      ...result,
      drift: result.deducted - result.logged,
      lostWithTheProcess: Math.max(0, ok - result.logs),
      holdsReleased: stillHeld === 0,
      stillHeld,
    };
    expect(result.deducted).toBe(result.logged);
    expect(result.usedQuota).toBe(result.logged);
    expect(result.requestCount).toBe(result.logs);
    // A call the kill cut off may have been settled first (billed once): a stream cut short, or an answer whose journal
    // entry left before it did (the journal goes first, so a served call is never lost); nothing else is billed.
    expect(result.deducted).toBeLessThanOrEqual((ok + cut + failed) * PRICE);
    // Every complete answer is in the logs, the killed relay's included (its journal is written by another).
    expect(Math.max(0, ok - result.logs), 'complete answers never logged (lost with the killed relay)').toBe(
      0,
    );
    expect(stillHeld, 'quota still held 30 s after the restart (a hold nobody released)').toBe(0);
  }, 120_000);

  /** Creates a channel serving `model` and prices it, as an administrator does in the console. */
  const addPricedModel = async (model: string) => {
    await api('POST', '/api/channel/', {
      name: model,
      type: 1,
      key: 'sk-upstream',
      base_url: fake.url,
      models: model,
      group: 'default',
    });
    priced[model] = 0.001;
    await api('PUT', '/api/option/', { key: 'ModelPrice', value: JSON.stringify(priced) });
  };
  /** Ms until every relay serves `model` (polled every 20 ms, 10 s at most; Infinity past that). */
  const servedByEveryRelay = async (key: string, model: string, since: number) => {
    await Promise.all(
      cluster.relays.map((relay) =>
        until(
          async () => ((await call(relay.url, key, model, false)).status === 200 ? true : undefined),
          10_000,
          20,
        ),
      ),
    );
    return Date.now() - since;
  };

  /**
   * From the moment a restarted (empty) Redis answers: how long (ms) until every relay's ledger is shared again
   * (`turnpike_redis_degraded` 0); until every relay serves `madeWhileAway`, a model added while Redis was away;
   * and, for a model added at that very moment (while the relays' subscriptions are coming back), how long from
   * that write until every relay serves it. Polled every 20 ms for at most 10 s (Infinity past that).
   */
  const resumedAfterRedis = async (key: string, madeWhileAway: string) => {
    const answeredAt = Date.now();
    const model = `after-redis-${Math.random().toString(36).slice(2, 8)}`;
    const degraded = (url: string) =>
      fetch(`${url}/metrics`)
        .then(async (r) => /^turnpike_redis_degraded (\S+)$/m.exec(await r.text())?.[1] !== '0')
        .catch(() => true);
    const ledgers = until(
      async () =>
        (await Promise.all(cluster.relays.map((r) => degraded(r.url)))).some(Boolean)
          ? undefined
          : Date.now() - answeredAt,
      10_000,
      20,
    ).catch(() => Number.POSITIVE_INFINITY);
    const whileAway = servedByEveryRelay(key, madeWhileAway, answeredAt).catch(
      () => Number.POSITIVE_INFINITY,
    );
    const madeAt = Date.now();
    await addPricedModel(model);
    const onReturn = servedByEveryRelay(key, model, madeAt).catch(() => Number.POSITIVE_INFINITY);
    return {
      ledgersSharedAgainMs: await ledgers,
      changeMadeWhileAwayServedMs: await whileAway,
      changeMadeOnReturnServedMs: await onReturn,
    };
  };

  it(
    `keeps serving without a 5xx while Redis is down for ${OUTAGE_SECONDS} s, and reconciles after`,
    async () => {
      const start = 1000 * PRICE;
      const { user, key } = await payer(start);
      const statuses = new Map<number, number>();
      const failures = new Map<number, Set<string>>();
      let stop = false;
      const load = Array.from({ length: 4 }, async (_, worker) => {
        for (let i = 0; !stop; i += 1) {
          const answer = await call(cluster.relayUrl, key, 'gpt-4o-mini', (i + worker) % 2 === 0).catch(
            () => ({ status: 0 }),
          );
          statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
          // The first few bodies of each failing status, to tell a drain, a balancer's 502 and a refusal apart.
          const body = 'body' in answer ? answer.body.slice(0, 300) : 'no answer';
          if ((answer.status >= 500 || answer.status === 0) && (failures.get(answer.status)?.size ?? 0) < 3)
            failures.set(answer.status, (failures.get(answer.status) ?? new Set()).add(body));
        }
      });
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      await cluster.redis.stop();
      const outageEnds = Date.now() + OUTAGE_SECONDS * 1000;
      // A model added in the console while Redis is away: the relays cannot hear of it (their periodic reload is
      // an hour here), so none serves it until Redis answers.
      const madeWhileAway = `while-away-${Math.random().toString(36).slice(2, 8)}`;
      await addPricedModel(madeWhileAway);
      const servedWhileAway = await Promise.all(
        cluster.relays.map(async (relay) => (await call(relay.url, key, madeWhileAway, false)).status),
      );
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, outageEnds - Date.now())));
      await cluster.redis.start();
      const back = await resumedAfterRedis(key, madeWhileAway);
      stop = true;
      await Promise.all(load);
      const crashed = [cluster.api, ...cluster.relays].filter((p) => p.exits().some((e) => !e.asked));
      const result = await settledBooks(user.id, start);
      const fivexx = [...statuses].filter(([s]) => s >= 500 || s === 0).reduce((n, [, c]) => n + c, 0);
      figures.redisOutage = {
        seconds: OUTAGE_SECONDS,
        statuses: Object.fromEntries(statuses),
        fivexx,
        ...result,
        drift: result.deducted - result.logged,
        servedWhileAway,
        ...back,
        failures: Object.fromEntries([...failures].map(([status, bodies]) => [status, [...bodies]])),
        // An exit nobody asked for: its code and signal (0 and none: a SIGTERM from outside the test).
        exitedOnTheirOwn: crashed.map((p) => ({ name: p.name, exits: p.exits().filter((e) => !e.asked) })),
      };
      expect(
        crashed.map((p) => `${p.name}: ${p.output().slice(-4_000)}`),
        'processes that exited on their own during the outage',
      ).toEqual([]);
      // README and docs/adr/0016/0022: sharing resumes within a second of Redis answering again, and every console
      // change, made while Redis was away or as it returns, reaches every relay within a second of Redis answering.
      expect(
        servedWhileAway.filter((status) => status === 200),
        'relays serving it before Redis is back',
      ).toEqual([]);
      expect(
        back.ledgersSharedAgainMs,
        'every relay back on the shared ledger after Redis answers',
      ).toBeLessThanOrEqual(1_000);
      expect(
        back.changeMadeWhileAwayServedMs,
        'a change made while Redis was away, served by every relay after Redis answers',
      ).toBeLessThanOrEqual(1_000);
      expect(
        back.changeMadeOnReturnServedMs,
        'a change made as Redis answers again, served by every relay after it was made',
      ).toBeLessThanOrEqual(1_000);
      expect(fivexx).toBe(0);
      expect(statuses.get(200) ?? 0).toBeGreaterThan(0);
      expect(result.deducted).toBe(result.logged);
      expect(result.usedQuota).toBe(result.logged);
      await until(async () => ((await outstanding(user.id)) === 0 ? true : undefined), 30_000, 200);
    },
    (OUTAGE_SECONDS + 120) * 1000,
  );
});
