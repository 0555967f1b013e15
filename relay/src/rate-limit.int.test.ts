import { users } from '@turnpike/core/db/schema/index';
import { eq } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildRelayApp } from './app.ts';
import type { RelayDeps } from './deps.ts';
import { type FakeOpenAi, startFakeOpenAi } from './testing/fake-openai.ts';
import { createRelayTestApp, injectThroughServer, type RelayTestApp } from './testing/relay-test-app.ts';
import { sleep, waitFor } from './testing/wait.ts';

const redisUrl = process.env.TEST_REDIS_URL;

let t: RelayTestApp;
let fake: FakeOpenAi;
const opened: FastifyInstance[] = [];
const connections: Redis[] = [];

/** A relay on the test database; `deps` replaces parts of the runtime (no Redis: memory mode). */
async function startRelay(
  options: { windowMs?: number; deps?: Partial<RelayDeps> } = {},
): Promise<FastifyInstance> {
  const relay = injectThroughServer(
    await buildRelayApp(
      { ...t.runtime.deps, ...options.deps },
      {
        flushIntervalMs: 20,
        ...(options.windowMs === undefined ? {} : { rateLimitWindowMs: options.windowMs }),
      },
    ),
  );
  await relay.ready();
  opened.push(relay);
  return relay;
}

async function newCaller(fields: Parameters<RelayTestApp['seedUser']>[0] = {}) {
  const user = await t.seedUser({ quota: 1_000_000, ...fields });
  const token = await t.seedToken(user.id);
  return { user, headers: { authorization: `Bearer sk-${token.key}` } };
}

const chat = (relay: FastifyInstance, headers: Record<string, string>, body: Record<string, unknown> = {}) =>
  relay.inject({
    method: 'POST',
    url: '/v1/chat/completions',
    headers,
    payload: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], ...body },
  });

async function setLimits(limits: { count: number; success: number; minutes?: number; group?: object }) {
  const { options } = t.runtime.deps;
  await options.set('ModelRequestRateLimitEnabled', 'true');
  await options.set('ModelRequestRateLimitCount', String(limits.count));
  await options.set('ModelRequestRateLimitSuccessCount', String(limits.success));
  await options.set('ModelRequestRateLimitDurationMinutes', String(limits.minutes ?? 1));
  await options.set('ModelRequestRateLimitGroup', JSON.stringify(limits.group ?? {}));
}

beforeAll(async () => {
  fake = await startFakeOpenAi();
  t = await createRelayTestApp();
  await t.runtime.deps.options.set('ModelRatio', JSON.stringify({ 'gpt-4o-mini': 1, 'broken-model': 1 }));
  await t.seedChannel({ key: 'sk-upstream', baseUrl: fake.url, models: 'gpt-4o-mini', group: 'default,vip' });
});

beforeEach(async () => {
  fake.setBehaviour({ error: undefined });
  await t.runtime.deps.options.set('ModelRequestRateLimitEnabled', 'false');
});

afterAll(async () => {
  for (const relay of opened) await relay.close();
  for (const connection of connections) connection.disconnect();
  await t?.close();
  await fake?.close();
});

describe('per-user request rate limit', () => {
  it('refuses the request over the total limit with a 429 in OpenAI shape, touching no quota', async () => {
    await setLimits({ count: 3, success: 1000, minutes: 2 });
    const relay = await startRelay();
    const { user, headers } = await newCaller();
    // A failed request counts towards the total too.
    const invalid = await chat(relay, headers, { messages: [] });
    expect(invalid.statusCode).toBe(400);
    for (let i = 0; i < 2; i += 1) expect((await chat(relay, headers)).statusCode).toBe(200);
    const before = await waitFor(async () => {
      const [row] = await t.runtime.deps.db.select().from(users).where(eq(users.id, user.id));
      return row!.requestCount === 2 ? row : undefined;
    });
    const upstreamCalls = fake.requests.length;

    const refused = await chat(relay, headers);
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['x-request-id']).toBeTruthy();
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(refused.headers).toMatchObject({
      'x-ratelimit-limit': '3',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': refused.headers['retry-after'],
    });
    const { error } = refused.json();
    expect(error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limit_exceeded', param: null });
    expect(error.message).toContain('at most 3 requests per 2 minutes');
    expect(fake.requests.length).toBe(upstreamCalls);
    await sleep(60);
    const [after] = await t.runtime.deps.db.select().from(users).where(eq(users.id, user.id));
    expect(after).toMatchObject({ quota: before.quota, usedQuota: before.usedQuota, requestCount: 2 });

    // The limit is per user: someone else is not affected.
    const other = await newCaller();
    expect((await chat(relay, other.headers)).statusCode).toBe(200);
  });

  it('counts only answers below 400 against the success limit, streams included', async () => {
    await setLimits({ count: 0, success: 2 });
    const relay = await startRelay();
    const { headers } = await newCaller();
    fake.setBehaviour({ error: 500 });
    for (let i = 0; i < 4; i += 1) expect((await chat(relay, headers)).statusCode).toBe(500);
    fake.setBehaviour({ error: undefined });
    expect((await chat(relay, headers)).statusCode).toBe(200);
    const stream = await chat(relay, headers, { stream: true });
    expect(stream.statusCode).toBe(200);
    expect(stream.body).toContain('data: [DONE]');
    await sleep(50);
    const refused = await chat(relay, headers);
    expect(refused.statusCode).toBe(429);
    expect(refused.json().error.message).toContain('at most 2 successful requests per 1 minute');
  });

  it('lets requests through again once the window has passed', async () => {
    await setLimits({ count: 2, success: 1000 });
    const relay = await startRelay({ windowMs: 1500 });
    const { headers } = await newCaller();
    expect((await chat(relay, headers)).statusCode).toBe(200);
    expect((await chat(relay, headers)).statusCode).toBe(200);
    expect((await chat(relay, headers)).statusCode).toBe(429);
    await sleep(1600);
    expect((await chat(relay, headers)).statusCode).toBe(200);
  });

  it("applies the group override of the caller's group", async () => {
    await setLimits({ count: 10, success: 1000, group: { vip: [1, 1000] } });
    const relay = await startRelay();
    const vip = await newCaller({ group: 'vip' });
    expect((await chat(relay, vip.headers)).statusCode).toBe(200);
    const refused = await chat(relay, vip.headers);
    expect(refused.statusCode).toBe(429);
    expect(refused.json().error.message).toContain('at most 1 requests');
    const plain = await newCaller();
    for (let i = 0; i < 3; i += 1) expect((await chat(relay, plain.headers)).statusCode).toBe(200);
  });

  it('does nothing while the switch is off', async () => {
    await setLimits({ count: 1, success: 1 });
    await t.runtime.deps.options.set('ModelRequestRateLimitEnabled', 'false');
    const relay = await startRelay();
    const { headers } = await newCaller();
    for (let i = 0; i < 3; i += 1) expect((await chat(relay, headers)).statusCode).toBe(200);
  });

  it('keeps the count in memory without Redis, one count per process', async () => {
    await setLimits({ count: 2, success: 1000 });
    const one = await startRelay({ deps: { redis: undefined } });
    const two = await startRelay({ deps: { redis: undefined } });
    const { headers } = await newCaller();
    expect((await chat(one, headers)).statusCode).toBe(200);
    expect((await chat(one, headers)).statusCode).toBe(200);
    expect((await chat(one, headers)).statusCode).toBe(429);
    // A process of its own has a count of its own.
    expect((await chat(two, headers)).statusCode).toBe(200);
  });

  it('keeps the limit in the process while Redis cannot be reached, never failing a request for it', async () => {
    await setLimits({ count: 2, success: 1000 });
    const down = new Redis('redis://127.0.0.1:1', { maxRetriesPerRequest: 0, retryStrategy: () => 1000 });
    down.on('error', () => {});
    connections.push(down);
    const relay = await startRelay({ deps: { redis: down } });
    const { headers } = await newCaller();
    for (let i = 0; i < 2; i += 1) expect((await chat(relay, headers)).statusCode).toBe(200);
    const refused = await chat(relay, headers);
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['x-ratelimit-remaining']).toBe('0');
  });

  it.skipIf(!redisUrl)('shares one count between relay processes on one Redis', async () => {
    await setLimits({ count: 4, success: 1000 });
    const connection = new Redis(redisUrl as string);
    connections.push(connection);
    const one = await startRelay();
    const two = await startRelay({ deps: { redis: connection } });
    const { headers } = await newCaller();
    expect((await chat(one, headers)).statusCode).toBe(200);
    expect((await chat(two, headers)).statusCode).toBe(200);
    expect((await chat(one, headers)).statusCode).toBe(200);
    expect((await chat(two, headers)).statusCode).toBe(200);
    expect((await chat(two, headers)).statusCode).toBe(429);
    expect((await chat(one, headers)).statusCode).toBe(429);
    const keys = await connection.keys(`${t.config.redisKeyPrefix}ratelimit:*`);
    expect(keys.length).toBeGreaterThan(0);
  });

  it.skipIf(!redisUrl)('shares the success count between processes on one Redis', async () => {
    await setLimits({ count: 0, success: 2 });
    const connection = new Redis(redisUrl as string);
    connections.push(connection);
    const one = await startRelay();
    const two = await startRelay({ deps: { redis: connection } });
    const { user, headers } = await newCaller();
    expect((await chat(one, headers)).statusCode).toBe(200);
    expect((await chat(two, headers)).statusCode).toBe(200);
    // The success mark is written after the answer, by each process on its own connection.
    const successKey = `${t.config.redisKeyPrefix}ratelimit:{${user.id}}:success`;
    await waitFor(async () => ((await connection.zcard(successKey)) === 2 ? true : undefined));
    expect((await chat(one, headers)).statusCode).toBe(429);
    expect((await chat(two, headers)).statusCode).toBe(429);
  });
});
