/**
 * The relay's limits hold their totals across processes (docs/adr/0028), proved on a real cluster on loopback: one
 * ROLE=api process and three ROLE=relay processes behind a round-robin balancer, on Postgres and a Redis of the
 * cluster's own. Bursts of concurrent calls through the balancer reach all three relays at once; what they admit
 * together never exceeds the limit. The figures are printed and written to test-results/cluster-figures.json.
 */
import { createDb, type Database } from '@turnpike/core/db/client';
import { tokens } from '@turnpike/core/db/schema/index';
import { generateTokenKey } from '@turnpike/core/domain/tokens';
import { createTokenRepo } from '@turnpike/core/repos/token.repo';
import { createUserRepo } from '@turnpike/core/repos/user.repo';
import { hasRedisServer } from '@turnpike/core/testing/redis-server';
import { type FakeOpenAi, startFakeOpenAi } from '@turnpike/relay/testing/fake-openai';
import { eq } from 'drizzle-orm';
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

interface Answer {
  readonly status: number;
  readonly body: string;
  readonly headers: Headers;
}

describe.skipIf(!enabled)('limits across three relays on one Redis', () => {
  let cluster: Cluster;
  let fake: FakeOpenAi;
  let database: Database;
  let dropDatabase: () => Promise<void>;
  let admin: Record<string, string>;
  const api = consoleApi(
    () => cluster.api.url,
    () => admin,
  );

  /** A user and a token with these limit columns (set before any relay has loaded the token). */
  const tokenWith = async (limits: { rpmLimit?: number; tpmLimit?: number; concurrencyLimit?: number }) => {
    const user = await createUserRepo(database.db).insert({
      username: `limits-${Math.random().toString(36).slice(2, 10)}`,
      password: 'not-a-real-hash',
      quota: 1_000_000_000,
    });
    const token = await createTokenRepo(database.db).insert({
      userId: user.id,
      key: generateTokenKey(),
      name: 'limits',
      remainQuota: 0,
      unlimitedQuota: true,
    });
    if (Object.keys(limits).length > 0)
      await database.db.update(tokens).set(limits).where(eq(tokens.id, token.id));
    return `sk-${token.key}`;
  };

  const call = (key: string, body: Record<string, unknown>, url = cluster.relayUrl): Promise<Answer> =>
    fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'hello cluster' }],
        ...body,
      }),
    }).then(async (response) => ({
      status: response.status,
      body: await response.text(),
      headers: response.headers,
    }));

  const burst = (n: number, key: string, body: Record<string, unknown>) =>
    Promise.all(Array.from({ length: n }, () => call(key, body)));

  beforeAll(async () => {
    const created = await createTestDatabaseUrl();
    dropDatabase = created.drop;
    fake = await startFakeOpenAi({});
    cluster = await startCluster({ databaseUrl: created.url as string });
    database = await createDb({ url: created.url });
    admin = await signInAsRoot(cluster.api.url, ROOT);
    await api('PUT', '/api/option/', { key: 'ModelRatio', value: JSON.stringify({ 'gpt-4o-mini': 0.075 }) });
    await api('POST', '/api/channel/', {
      name: 'fake upstream',
      type: 1,
      key: 'sk-upstream',
      base_url: fake.url,
      models: 'gpt-4o-mini',
      group: 'default',
    });
  }, 180_000);

  afterAll(async () => {
    console.log(`limit figures\n${JSON.stringify(figures, null, 2)}`);
    recordClusterFigures({ limits: figures });
    await database?.close();
    await cluster?.close();
    await fake?.close();
    await dropDatabase?.();
  }, 60_000);

  it('admits tokens per minute up to the limit and not one estimate more, whichever relay is asked', async () => {
    const limit = 10_000;
    const key = await tokenWith({ tpmLimit: limit });
    // The upstream answers slowly, so no answer settles (and corrects its estimate) during the burst.
    fake.setBehaviour({ headersDelayMs: 1500 });
    try {
      const answers = await burst(60, key, { max_tokens: 700 });
      const served = answers.filter((a) => a.status === 200).length;
      const refused = answers.filter((a) => a.status === 429);
      expect(served + refused.length).toBe(answers.length);
      const needs = Number(/needs about (\d+)/.exec(refused[0]?.body ?? '')?.[1]);
      expect(needs).toBeGreaterThan(700);
      // Exact: every estimate admitted fits in the limit, and the next one would not have.
      expect(served * needs).toBeLessThanOrEqual(limit);
      expect((served + 1) * needs).toBeGreaterThan(limit);
      for (const a of refused) {
        expect(a.headers.get('x-ratelimit-limit-tokens')).toBe(String(limit));
        expect(Number(a.headers.get('retry-after'))).toBeGreaterThan(0);
      }
      figures.tokensPerMinute = {
        limit,
        estimatePerCall: needs,
        calls: answers.length,
        served,
        refused: refused.length,
      };
    } finally {
      fake.setBehaviour({ headersDelayMs: 0 });
    }
  }, 60_000);

  it('admits requests per minute of a model up to its total across the relays', async () => {
    await api('PUT', '/api/option/', {
      key: 'RateLimitModels',
      value: JSON.stringify({ 'gpt-4o-mini': { rpm: 15 } }),
    });
    try {
      const key = await tokenWith({});
      const answers = await burst(45, key, {});
      const served = answers.filter((a) => a.status === 200).length;
      figures.modelRequestsPerMinute = { limit: 15, calls: answers.length, served };
      expect(served).toBe(15);
      expect(answers.filter((a) => a.status === 429)).toHaveLength(30);
    } finally {
      await api('PUT', '/api/option/', { key: 'RateLimitModels', value: '{}' });
    }
  }, 60_000);

  it('holds concurrent requests to the limit across relays, and frees every slot when they end', async () => {
    const limit = 4;
    const key = await tokenWith({ concurrencyLimit: limit });
    fake.setBehaviour({ headersDelayMs: 1500 });
    try {
      const answers = await burst(30, key, { stream: true });
      const served = answers.filter((a) => a.status === 200).length;
      figures.concurrency = { limit, calls: answers.length, served };
      expect(served).toBe(limit);
      for (const a of answers.filter((a) => a.status === 429))
        expect(a.headers.get('x-ratelimit-limit-concurrency')).toBe(String(limit));
    } finally {
      fake.setBehaviour({ headersDelayMs: 0 });
    }
    // Every slot came back: a second burst is admitted to the limit again, on any relay.
    fake.setBehaviour({ headersDelayMs: 800 });
    try {
      const again = await burst(12, key, {});
      expect(again.filter((a) => a.status === 200)).toHaveLength(limit);
    } finally {
      fake.setBehaviour({ headersDelayMs: 0 });
    }
  }, 60_000);

  it('gives back the slots of a relay killed mid-stream when their lease ends, and not before', async () => {
    const limit = 2;
    const key = await tokenWith({ concurrencyLimit: limit });
    const [survivor, victim] = cluster.relays as [Cluster['relays'][0], Cluster['relays'][0]];
    // Two slow streams on the victim take both slots.
    fake.setBehaviour({ chunkDelayMs: 2000 });
    const heads = await Promise.all(
      [0, 1].map(() =>
        fetch(`${victim.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({
            model: 'gpt-4o-mini',
            stream: true,
            messages: [{ role: 'user', content: 'hi' }],
          }),
        }),
      ),
    );
    expect(heads.map((h) => h.status)).toEqual([200, 200]);
    // Killed before the client lets go: a stream the client closes first gives its slot back, as it should.
    await victim.signal('SIGKILL');
    const killedAt = Date.now();
    for (const head of heads) head.body?.cancel().catch(() => {});
    fake.setBehaviour({ chunkDelayMs: 0 });
    try {
      // Nobody released them: the survivor still finds both slots taken.
      const refused = await call(key, {}, survivor.url);
      expect(refused.status).toBe(429);
      expect(refused.headers.get('x-ratelimit-remaining-concurrency')).toBe('0');
      let admittedAt = 0;
      while (Date.now() - killedAt < 90_000) {
        const answer = await call(key, {}, survivor.url);
        if (answer.status === 200) {
          admittedAt = Date.now();
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
      const seconds = (admittedAt - killedAt) / 1000;
      figures.crashedRelaySlots = {
        limit,
        leaseSeconds: 60,
        slotsBackAfterSeconds: Number(seconds.toFixed(1)),
      };
      expect(admittedAt).toBeGreaterThan(0);
      // The lease (60 s) is renewed every 20 s: the slots come back within one lease of the kill, not at once.
      expect(seconds).toBeGreaterThan(30);
      expect(seconds).toBeLessThanOrEqual(65);
    } finally {
      await victim.restart();
    }
  }, 150_000);
});
