/**
 * Session affinity across relays (docs/adr/0027), measured on a real cluster on loopback: three ROLE=relay processes
 * behind a round-robin balancer, sharing Postgres and Redis, two channels whose fake upstreams report prompt-cache
 * reads only when the same key sees the same prefix again. Multi-turn agent sessions run with affinity on and off;
 * the cached-token share (cache reads / prompt tokens, from the usage the relays metered) of each is printed and
 * written to test-results/cluster-figures.json.
 */
import { DEFAULT_CHANNEL_AFFINITY } from '@turnpike/core/channels/affinity-rules';
import { createDb } from '@turnpike/core/db/client';
import { logs } from '@turnpike/core/db/schema/index';
import { generateTokenKey } from '@turnpike/core/domain/tokens';
import { createTokenRepo } from '@turnpike/core/repos/token.repo';
import { createUserRepo } from '@turnpike/core/repos/user.repo';
import { hasRedisServer } from '@turnpike/core/testing/redis-server';
import { type FakePromptCache, startFakePromptCache } from '@turnpike/relay/testing/fake-prompt-cache';
import { inArray } from 'drizzle-orm';
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

const enabled = Boolean(process.env.TEST_POSTGRES_URL) && hasRedisServer();
const SESSIONS = 5;
const TURNS = 8;
const SYSTEM = `You are a coding agent. ${'Follow the repository conventions carefully. '.repeat(80)}`;
const toolOutput = (session: string, step: number) =>
  `${session} step ${step}, the file read:\n${`  const line${step} = compute(${step});\n`.repeat(40)}`;

describe.skipIf(!enabled)('session affinity across three relays', () => {
  let cluster: Cluster;
  let east: FakePromptCache;
  let west: FakePromptCache;
  let dropDatabase: () => Promise<void>;
  let admin: Record<string, string>;
  let tokenKey: string;
  let databaseUrl: string;
  const figures: Record<string, unknown> = {};
  const api = consoleApi(
    () => cluster.api.url,
    () => admin,
  );

  /** Runs the sessions turn by turn, interleaved, as several agents at once; answers the cached-token share. */
  async function runSessions(label: string) {
    let prompt = 0;
    let cached = 0;
    /** Each call's request id (`x-request-id`, the consume log's `request_id`), by session. */
    const calls = new Map<string, string[]>();
    for (let turn = 0; turn < TURNS; turn += 1) {
      // Agents do not take turns in a fixed order: a fixed rotation against three round-robin relays could
      // itself keep a session on one channel and hide what affinity does.
      for (const s of shuffled(SESSIONS, turn)) {
        const session = `${label}-${s}`;
        const messages: { role: string; content: string }[] = [{ role: 'system', content: SYSTEM }];
        for (let i = 0; i < turn; i += 1)
          messages.push(
            { role: 'user', content: toolOutput(session, i) },
            { role: 'assistant', content: 'Done.' },
          );
        messages.push({ role: 'user', content: toolOutput(session, turn) });
        const response = await fetch(`${cluster.relayUrl}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${tokenKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'agent-model', prompt_cache_key: session, messages }),
        });
        const body = (await response.json()) as {
          usage: { prompt_tokens: number; prompt_tokens_details?: { cached_tokens?: number } };
        };
        expect(response.status, JSON.stringify(body)).toBe(200);
        calls.set(session, [...(calls.get(session) ?? []), response.headers.get('x-request-id') ?? '']);
        prompt += body.usage.prompt_tokens;
        cached += body.usage.prompt_tokens_details?.cached_tokens ?? 0;
      }
    }
    return { prompt, cached, share: Math.round((cached / prompt) * 1000) / 1000, calls };
  }

  /**
   * The channels that served each session, read from the consume logs the relays wrote (by request id), once every
   * call is logged: `{ session: [channel ids] }`.
   */
  async function channelsBySession(calls: Map<string, string[]>): Promise<Record<string, number[]>> {
    const ids = [...calls.values()].flat();
    const database = await createDb({ url: databaseUrl });
    try {
      const deadline = Date.now() + 20_000;
      for (;;) {
        const rows = await database.db
          .select({ requestId: logs.requestId, channelId: logs.channelId })
          .from(logs)
          .where(inArray(logs.requestId, ids));
        if (rows.length >= ids.length || Date.now() > deadline) {
          const channelOf = new Map(rows.map((r) => [r.requestId, r.channelId]));
          return Object.fromEntries(
            [...calls].map(([session, requestIds]) => [
              session,
              [...new Set(requestIds.map((id) => channelOf.get(id) ?? -1))].sort(),
            ]),
          );
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    } finally {
      await database.close();
    }
  }

  /** 0..n-1 in an order that changes with `seed`, the same on every run. */
  function shuffled(n: number, seed: number): number[] {
    const order = Array.from({ length: n }, (_, i) => i);
    let state = seed * 7919 + 17;
    for (let i = n - 1; i > 0; i -= 1) {
      state = (state * 1103515245 + 12345) % 2147483648;
      const j = state % (i + 1);
      [order[i], order[j]] = [order[j] as number, order[i] as number];
    }
    return order;
  }

  /** Both channels see the shared system prompt once, so neither run starts colder than the other. */
  async function warmUp() {
    for (let i = 0; i < 6; i += 1)
      await fetch(`${cluster.relayUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${tokenKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'agent-model',
          messages: [
            { role: 'system', content: SYSTEM },
            { role: 'user', content: `warm-up ${i}` },
          ],
        }),
      });
  }

  async function setAffinity(enabledNow: boolean) {
    await api('PUT', '/api/option/', {
      key: 'ChannelAffinity',
      value: JSON.stringify({ ...DEFAULT_CHANNEL_AFFINITY, enabled: enabledNow }),
    });
    // Every relay applies an option change within a second (ADR 0016): wait until each says it has applied this one.
    const redis = new Redis(cluster.redis.url, { maxRetriesPerRequest: 1 });
    try {
      const version = Number(await redis.get(`${cluster.keyPrefix}config-version`));
      const applied = (url: string) =>
        fetch(`${url}/metrics`)
          .then(async (r) =>
            Number(/^turnpike_config_version_applied (\S+)$/m.exec(await r.text())?.[1] ?? 0),
          )
          .catch(() => 0);
      const deadline = Date.now() + 5_000;
      while ((await Promise.all(cluster.relays.map((r) => applied(r.url)))).some((v) => v < version)) {
        if (Date.now() > deadline)
          throw new Error(`a relay did not apply config version ${version} within 5 s`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    } finally {
      redis.disconnect();
    }
  }

  beforeAll(async () => {
    const created = await createTestDatabaseUrl();
    dropDatabase = created.drop;
    databaseUrl = created.url as string;
    east = await startFakePromptCache({ 'sk-east': 'ok' });
    west = await startFakePromptCache({ 'sk-west': 'ok' });
    cluster = await startCluster({ databaseUrl: created.url as string, relays: 3 });
    admin = await signInAsRoot(cluster.api.url, ROOT);
    await api('PUT', '/api/option/', { key: 'ModelRatio', value: JSON.stringify({ 'agent-model': 1 }) });
    for (const [name, fake, key] of [
      ['east', east, 'sk-east'],
      ['west', west, 'sk-west'],
    ] as const)
      await api('POST', '/api/channel/', { name, type: 1, key, base_url: fake.url, models: 'agent-model' });
    const database = await createDb({ url: created.url });
    try {
      const user = await createUserRepo(database.db).insert({
        username: 'agent-user',
        password: 'not-a-real-hash',
        quota: 1_000_000_000,
      });
      const token = await createTokenRepo(database.db).insert({
        userId: user.id,
        key: generateTokenKey(),
        name: 'agent',
        remainQuota: 0,
        unlimitedQuota: true,
      });
      tokenKey = `sk-${token.key}`;
    } finally {
      await database.close();
    }
  }, 180_000);

  afterAll(async () => {
    console.log(`affinity figures\n${JSON.stringify(figures, null, 2)}`);
    recordClusterFigures(figures);
    await cluster?.close();
    await east?.close();
    await west?.close();
    await dropDatabase?.();
  }, 60_000);

  it('keeps each session on one channel across relays, and the cached-token share is higher than without', async () => {
    await setAffinity(false);
    await warmUp();
    expect(east.calls.get('sk-east')).toBeGreaterThan(0);
    expect(west.calls.get('sk-west')).toBeGreaterThan(0);
    await setAffinity(true);
    east.calls.clear();
    west.calls.clear();
    const on = await runSessions('on');
    const onSplit = { east: east.calls.get('sk-east') ?? 0, west: west.calls.get('sk-west') ?? 0 };
    const onChannels = await channelsBySession(on.calls);
    await setAffinity(false);
    east.calls.clear();
    west.calls.clear();
    const off = await runSessions('off');
    const offSplit = { east: east.calls.get('sk-east') ?? 0, west: west.calls.get('sk-west') ?? 0 };
    figures.affinity = {
      relays: 3,
      channels: 2,
      sessions: SESSIONS,
      turns: TURNS,
      cachedTokenShareWithAffinity: on.share,
      cachedTokenShareWithoutAffinity: off.share,
      callsPerChannelWithAffinity: onSplit,
      callsPerChannelWithoutAffinity: offSplit,
      channelsBySessionWithAffinity: onChannels,
    };
    // Every session's turns after the first read their whole prefix from the cache.
    expect(on.share).toBeGreaterThan(off.share + 0.05);
    expect(onSplit.east + onSplit.west).toBe(SESSIONS * TURNS);
    // Each session stayed on one channel through all three relays: one channel id in the logs of its calls.
    for (const [session, served] of Object.entries(onChannels))
      expect(served, `channels that served session ${session}`).toHaveLength(1);
    expect(Object.keys(onChannels)).toHaveLength(SESSIONS);
  }, 120_000);
});
