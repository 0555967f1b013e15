/**
 * Concurrent requests of one payer against a balance that covers only some of them (reference §5.3): what was
 * served never cost more than the balance, every refused request is refused before the upstream is called, and
 * the quota of the consume logs adds up to exactly what the balance lost.
 */
import { logs, tokens, users } from '@turnpike/core/db/schema/index';
import { eq } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeOpenAi, startFakeOpenAi } from './testing/fake-openai.ts';
import { createRelayTestApp, type RelayTestApp } from './testing/relay-test-app.ts';
import { sleep } from './testing/wait.ts';

const CONCURRENCY = 50;

let t: RelayTestApp;
let fake: FakeOpenAi;

const db = () => t.runtime.deps.db;

/** The quota a response says it was charged: the header, or the SSE comment of a stream. */
function chargedOf(response: LightMyRequestResponse): number {
  const header = response.headers['x-turnpike-quota'];
  if (header !== undefined) return Number(header);
  const match = /^: x-turnpike-quota: (\d+)$/m.exec(response.body);
  if (!match) throw new Error(`no quota in the answer: ${response.body.slice(0, 200)}`);
  return Number(match[1]);
}

/** Fires all requests at once, half of them streams. */
function burst(key: string): Promise<LightMyRequestResponse[]> {
  return Promise.all(
    Array.from({ length: CONCURRENCY }, (_, i) =>
      t.relay.inject({
        method: 'POST',
        url: '/v1/chat/completions',
        headers: { authorization: `Bearer sk-${key}` },
        payload: {
          model: 'gpt-4o-mini',
          max_tokens: 100,
          stream: i % 2 === 1,
          messages: [{ role: 'user', content: `Concurrent request number ${i}` }],
        },
      }),
    ),
  );
}

/** Sum of the logged quota of a user once every consume log of the burst is written. */
async function loggedQuota(userId: number, expectedLogs: number): Promise<number> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const rows = await db().select({ quota: logs.quota }).from(logs).where(eq(logs.userId, userId));
    if (rows.length >= expectedLogs || Date.now() > deadline) {
      expect(rows).toHaveLength(expectedLogs);
      return rows.reduce((sum, row) => sum + row.quota, 0);
    }
    await sleep(20);
  }
}

beforeAll(async () => {
  // Upstream answers take a while, so the requests really overlap.
  fake = await startFakeOpenAi({ headersDelayMs: 40, chunkDelayMs: 2 });
  t = await createRelayTestApp();
  await t.runtime.deps.options.set('ModelRatio', JSON.stringify({ 'gpt-4o-mini': 1.5 }));
  await t.seedChannel({ key: 'sk-upstream', baseUrl: fake.url, models: 'gpt-4o-mini' });
  await t.startRelay();
});

afterAll(async () => {
  await t?.close();
  await fake?.close();
});

describe(`${CONCURRENCY} concurrent requests of one payer`, () => {
  it('never overspend a small user balance', async () => {
    // Each request reserves about (prompt + 100) × 1.5 ≈ 170 and costs about 85: the balance covers a dozen.
    const start = 2000;
    const user = await t.seedUser({ quota: start });
    const token = await t.seedToken(user.id);
    fake.requests.length = 0;
    const responses = await burst(token.key);

    const ok = responses.filter((r) => r.statusCode === 200);
    const refused = responses.filter((r) => r.statusCode !== 200);
    expect(ok.length).toBeGreaterThan(0);
    expect(refused.length).toBeGreaterThan(0);
    for (const r of refused) {
      expect(r.statusCode).toBe(403);
      expect(r.json().error.code).toBe('insufficient_user_quota');
    }
    // Refused requests never reached the upstream.
    expect(fake.requests).toHaveLength(ok.length);

    const charged = ok.reduce((sum, r) => sum + chargedOf(r), 0);
    expect(charged).toBeLessThanOrEqual(start);
    // The debits and the logs are written together: once the logs are there, so is the balance.
    expect(await loggedQuota(user.id, ok.length)).toBe(charged);
    const [row] = await db().select().from(users).where(eq(users.id, user.id));
    expect(start - row!.quota).toBe(charged);
  });

  it('never overspend a small token remain_quota', async () => {
    const start = 1_000_000;
    const tokenStart = 1500;
    const user = await t.seedUser({ quota: start });
    const token = await t.seedToken(user.id, { unlimitedQuota: false, remainQuota: tokenStart });
    fake.requests.length = 0;
    const responses = await burst(token.key);

    const ok = responses.filter((r) => r.statusCode === 200);
    const refused = responses.filter((r) => r.statusCode !== 200);
    expect(ok.length).toBeGreaterThan(0);
    expect(refused.length).toBeGreaterThan(0);
    for (const r of refused) {
      // Refused while reserving, or at auth once the token is found spent.
      expect([401, 403]).toContain(r.statusCode);
      expect(['pre_consume_token_quota_failed', 'invalid_api_key']).toContain(r.json().error.code);
    }
    expect(fake.requests).toHaveLength(ok.length);

    const spent = ok.reduce((sum, r) => sum + chargedOf(r), 0);
    expect(spent).toBeLessThanOrEqual(tokenStart);
    expect(await loggedQuota(user.id, ok.length)).toBe(spent);
    const [tokenAfter] = await db().select().from(tokens).where(eq(tokens.id, token.id));
    const [userAfter] = await db().select().from(users).where(eq(users.id, user.id));
    // The token and the user lost exactly what was logged.
    expect(tokenStart - tokenAfter!.remainQuota).toBe(spent);
    expect(start - userAfter!.quota).toBe(spent);
  });
});

describe('a burst of a $1 model on a balance good for 150 calls', () => {
  const PRICE = 500_000;

  it('serves exactly what the balance covers, and the logs add up to the deduction', async () => {
    await t.runtime.deps.options.set('ModelPrice', JSON.stringify({ 'gpt-4o-mini': 1 }));
    try {
      const start = 150 * PRICE;
      const user = await t.seedUser({ quota: start });
      const token = await t.seedToken(user.id);
      const responses = await Promise.all(
        Array.from({ length: 300 }, (_, i) =>
          t.relay.inject({
            method: 'POST',
            url: '/v1/chat/completions',
            headers: { authorization: `Bearer sk-${token.key}` },
            payload: {
              model: 'gpt-4o-mini',
              stream: i % 2 === 1,
              messages: [{ role: 'user', content: 'hi' }],
            },
          }),
        ),
      );
      const served = responses.filter((r) => r.statusCode === 200);
      expect(served.length * PRICE).toBeLessThanOrEqual(start);
      expect(served).toHaveLength(150);
      expect(await loggedQuota(user.id, served.length)).toBe(150 * PRICE);
      const [row] = await db().select().from(users).where(eq(users.id, user.id));
      expect(row).toMatchObject({ quota: 0, usedQuota: start, requestCount: 150 });
    } finally {
      await t.runtime.deps.options.set('ModelPrice', '{}');
    }
  });

  it('keeps a token limited to $10 within its $10', async () => {
    await t.runtime.deps.options.set('ModelPrice', JSON.stringify({ 'gpt-4o-mini': 1 }));
    try {
      const user = await t.seedUser({ quota: 1000 * PRICE });
      const token = await t.seedToken(user.id, { unlimitedQuota: false, remainQuota: 10 * PRICE });
      const responses = await burst(token.key);
      const served = responses.filter((r) => r.statusCode === 200);
      expect(served).toHaveLength(10);
      expect(await loggedQuota(user.id, served.length)).toBe(10 * PRICE);
      const [row] = await db().select().from(tokens).where(eq(tokens.id, token.id));
      expect(row!.remainQuota).toBe(0);
    } finally {
      await t.runtime.deps.options.set('ModelPrice', '{}');
    }
  });
});
