/**
 * Quota windows in the relay (docs/adr/0043), as a user of the gateway meets them, on the back end of the run (the
 * embedded default: PGlite and the memory ledger; or Postgres and Redis): a window admits exactly what its limit
 * covers under concurrency and refuses the rest with a 429 naming it; what the window spent is what the consume logs
 * and the balance say; a clock moved past the reset admits again; a rolling window frees as its oldest calls leave;
 * requests windows count calls; a window and a balance both binding each say which refused.
 *
 * Prices: `ModelPrice` of gpt-4o-mini set to $0.001 a call, and 500,000 quota a dollar (the `QuotaPerUnit` default,
 * the figure the issue reads charges with): every call holds and costs 500 quota. The windows' limits are chosen
 * against that 500 and written as literals.
 */
import { logs, quotaWindowUsage, tokens, users } from '@turnpike/core/db/schema/index';
import { LogType } from '@turnpike/core/domain/logs';
import { and, asc, eq, like } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeOpenAi, startFakeOpenAi } from './testing/fake-openai.ts';
import { createRelayTestApp, type RelayTestApp } from './testing/relay-test-app.ts';
import { sleep } from './testing/wait.ts';

/** Quota one call holds and costs: $0.001 × 500,000. */
const PER_CALL = 500;

/** 2026-11-28 23:59:00 UTC: a minute before the daily windows reset. */
const BEFORE_MIDNIGHT = 1_795_910_340;

let t: RelayTestApp;
let fake: FakeOpenAi;
let clock = BEFORE_MIDNIGHT;

const db = () => t.runtime.deps.db;

const call = (key: string, body: Record<string, unknown> = {}) =>
  t.relay.inject({
    method: 'POST',
    url: '/v1/chat/completions',
    headers: { authorization: `Bearer sk-${key}` },
    payload: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello windows' }], ...body },
  });

const burst = (n: number, key: string) => Promise.all(Array.from({ length: n }, () => call(key)));

const served = (answers: readonly LightMyRequestResponse[]) => answers.filter((a) => a.statusCode === 200);

/** Waits until the user's consume logs number `count`; their quota in sum. */
async function loggedQuota(userId: number, count: number): Promise<number> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const rows = await db()
      .select({ quota: logs.quota })
      .from(logs)
      .where(and(eq(logs.userId, userId), eq(logs.type, LogType.Consume)));
    if (rows.length >= count || Date.now() > deadline) {
      expect(rows).toHaveLength(count);
      return rows.reduce((sum, row) => sum + row.quota, 0);
    }
    await sleep(20);
  }
}

/** What `quota_window_usage` holds for keys starting with `prefix`, slot by slot. */
const slots = (prefix: string) =>
  db()
    .select({
      key: quotaWindowUsage.windowKey,
      slot: quotaWindowUsage.slotStart,
      amount: quotaWindowUsage.amount,
    })
    .from(quotaWindowUsage)
    .where(like(quotaWindowUsage.windowKey, `${prefix}%`))
    .orderBy(asc(quotaWindowUsage.windowKey), asc(quotaWindowUsage.slotStart));

beforeAll(async () => {
  // Answers take a while, so the calls of a burst are all in flight together.
  fake = await startFakeOpenAi({ headersDelayMs: 50 });
  t = await createRelayTestApp();
  await t.runtime.deps.options.set('ModelPrice', JSON.stringify({ 'gpt-4o-mini': 0.001 }));
  await t.seedChannel({ key: 'sk-upstream', baseUrl: fake.url, models: 'gpt-4o-mini', group: 'default,vip' });
  await t.startRelay({ windowClock: () => clock });
});

afterAll(async () => {
  await t?.close();
  await fake?.close();
});

describe('a daily quota window', () => {
  it('admits exactly the calls it covers out of 50 at once, and its spending is what the logs and the balance say', async () => {
    clock = BEFORE_MIDNIGHT;
    // 7,200 covers 14 calls of 500 (7,000) and not 15 (7,500).
    const user = await t.seedUser({ quota: 1_000_000 });
    const token = await t.seedToken(user.id, {
      quotaWindows: [{ unit: 'quota', limit: 7_200, period: 'day' }],
    });
    const answers = await burst(50, token.key);
    expect(served(answers)).toHaveLength(14);
    const refused = answers.filter((a) => a.statusCode !== 200);
    expect(refused).toHaveLength(36);
    for (const answer of refused) {
      expect(answer.statusCode).toBe(429);
      expect(answer.json().error).toMatchObject({ type: 'rate_limit_error', code: 'quota_window_exceeded' });
      expect(answer.json().error.message).toContain("the token's daily quota window cannot cover this call");
      expect(answer.headers).toMatchObject({
        'x-turnpike-window': 'token quota:day',
        'x-turnpike-window-limit': '7200',
        'x-turnpike-window-remaining': '200',
        'x-turnpike-window-reset': '2026-11-29T00:00:00Z',
        'retry-after': '60',
      });
    }
    expect(await loggedQuota(user.id, 14)).toBe(14 * PER_CALL);
    const [row] = await db().select().from(users).where(eq(users.id, user.id));
    expect(1_000_000 - row!.quota).toBe(7_000);
    expect(await slots(`t:${token.id}|`)).toEqual([
      { key: `t:${token.id}|quota:day`, slot: 1_795_824_000, amount: 7_000 },
    ]);

    // Past midnight the window starts again: 14 more, in a slot of their own.
    clock = BEFORE_MIDNIGHT + 61;
    expect(served(await burst(50, token.key))).toHaveLength(14);
    expect(await loggedQuota(user.id, 28)).toBe(28 * PER_CALL);
    expect(await slots(`t:${token.id}|`)).toEqual([
      { key: `t:${token.id}|quota:day`, slot: 1_795_824_000, amount: 7_000 },
      { key: `t:${token.id}|quota:day`, slot: 1_795_910_400, amount: 7_000 },
    ]);
  });

  it('gives a refunded call back to the window, and applies a new limit to the next call, keeping what was spent', async () => {
    clock = BEFORE_MIDNIGHT;
    const user = await t.seedUser({ quota: 1_000_000 });
    const token = await t.seedToken(user.id, {
      quotaWindows: [{ unit: 'quota', limit: 1_000, period: 'day' }],
    });
    // The upstream fails the first call: nothing produced, nothing kept in the window.
    fake.setBehaviour({ error: 500, errorTimes: 1 });
    try {
      expect((await call(token.key)).statusCode).toBeGreaterThanOrEqual(500);
    } finally {
      fake.setBehaviour({ error: undefined, errorTimes: undefined });
    }
    expect((await call(token.key)).statusCode).toBe(200);
    expect((await call(token.key)).statusCode).toBe(200);
    expect((await call(token.key)).statusCode).toBe(429);
    // The console raises the limit to 1,500: the 1,000 spent stay, one more call fits.
    await db()
      .update(tokens)
      .set({ quotaWindows: [{ unit: 'quota', limit: 1_500, period: 'day' }] })
      .where(eq(tokens.id, token.id));
    await t.runtime.deps.bus.publish({ type: 'tokens.changed', ids: [token.id] });
    expect((await call(token.key)).statusCode).toBe(200);
    const refused = await call(token.key);
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['x-turnpike-window-remaining']).toBe('0');
    expect(await loggedQuota(user.id, 3)).toBe(1_500);
  });
});

describe('a rolling 5-hour window', () => {
  it('counts the calls of the last 5 hours and frees room as the oldest leave', async () => {
    // 10:00 UTC, a bucket boundary; 2,600 covers 5 calls of 500.
    const start = 1_795_860_000;
    clock = start;
    const user = await t.seedUser({
      quota: 1_000_000,
      quotaWindows: [{ unit: 'quota', limit: 2_600, period: 'rolling', hours: 5 }],
    });
    const token = await t.seedToken(user.id);
    expect(served(await burst(3, token.key))).toHaveLength(3);
    clock = start + 2 * 3_600;
    expect(served(await burst(4, token.key))).toHaveLength(2);
    const refused = await call(token.key);
    expect(refused.statusCode).toBe(429);
    expect(refused.json().error.message).toContain("the user's 5-hour quota window");
    // The three calls of 10:00 leave at 15:00, three hours from now.
    expect(refused.headers).toMatchObject({
      'x-turnpike-window': 'user quota:5h',
      'x-turnpike-window-remaining': '100',
      'x-turnpike-window-reset': '2026-11-28T15:00:00Z',
      'retry-after': '10800',
    });
    clock = start + 5 * 3_600;
    expect(served(await burst(4, token.key))).toHaveLength(3);
    expect(await loggedQuota(user.id, 8)).toBe(8 * PER_CALL);
  });
});

describe('a requests window of a group', () => {
  it("admits each user of the group that many calls a day, not counting a call that produced nothing, in the caller's protocol", async () => {
    clock = BEFORE_MIDNIGHT;
    await t.runtime.deps.options.set(
      'GroupQuotaWindows',
      JSON.stringify({ vip: [{ unit: 'requests', limit: 3, period: 'day' }] }),
    );
    try {
      const user = await t.seedUser({ quota: 1_000_000, group: 'vip' });
      const other = await t.seedUser({ quota: 1_000_000, group: 'vip' });
      const token = await t.seedToken(user.id);
      const otherToken = await t.seedToken(other.id);
      fake.setBehaviour({ error: 500, errorTimes: 1 });
      try {
        expect((await call(token.key)).statusCode).toBeGreaterThanOrEqual(500);
      } finally {
        fake.setBehaviour({ error: undefined, errorTimes: undefined });
      }
      const answers = await burst(10, token.key);
      expect(served(answers)).toHaveLength(3);
      const refused = answers.find((a) => a.statusCode === 429);
      expect(refused?.json().error.message).toContain(
        "the daily request window of the group vip (each user's own) is used up (3 requests)",
      );
      expect(refused?.headers['x-turnpike-window']).toBe('group:vip requests:day');
      // Each user of the group has a window of their own.
      expect(served(await burst(5, otherToken.key))).toHaveLength(3);
      await loggedQuota(user.id, 3);
      expect(await slots(`g:vip:${user.id}|`)).toEqual([
        { key: `g:vip:${user.id}|requests:day`, slot: 1_795_824_000, amount: 3 },
      ]);
      // An Anthropic client and a Gemini client are refused in their own shapes.
      const anthropic = await t.relay.inject({
        method: 'POST',
        url: '/v1/messages',
        headers: { 'x-api-key': `sk-${token.key}`, 'anthropic-version': '2023-06-01' },
        payload: { model: 'gpt-4o-mini', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] },
      });
      expect(anthropic.statusCode).toBe(429);
      expect(anthropic.json()).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } });
      expect(anthropic.headers['retry-after']).toBe('60');
      const gemini = await t.relay.inject({
        method: 'POST',
        url: '/v1beta/models/gpt-4o-mini:generateContent',
        headers: { 'x-goog-api-key': `sk-${token.key}` },
        payload: { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] },
      });
      expect(gemini.statusCode).toBe(429);
      expect(gemini.json()).toMatchObject({ error: { code: 429, status: 'RESOURCE_EXHAUSTED' } });
    } finally {
      await t.runtime.deps.options.set('GroupQuotaWindows', '{}');
    }
  });
});

describe('a window and a balance both binding', () => {
  it('refuses with whichever cannot cover the call, and names the window beside an empty balance', async () => {
    clock = BEFORE_MIDNIGHT;
    // The balance covers 12 calls; token A's window 5 of them, token B has none.
    const user = await t.seedUser({ quota: 6_000 });
    const windowed = await t.seedToken(user.id, {
      quotaWindows: [{ unit: 'quota', limit: 2_500, period: 'day' }],
    });
    const plain = await t.seedToken(user.id);
    const first = await burst(20, windowed.key);
    expect(served(first)).toHaveLength(5);
    for (const answer of first.filter((a) => a.statusCode !== 200)) {
      expect(answer.statusCode).toBe(429);
      expect(answer.json().error.code).toBe('quota_window_exceeded');
    }
    const second = await burst(20, plain.key);
    expect(served(second)).toHaveLength(7);
    for (const answer of second.filter((a) => a.statusCode !== 200)) {
      expect(answer.statusCode).toBe(403);
      expect(answer.json().error.code).toBe('insufficient_user_quota');
    }
    // Both spent: the balance is named (a wait would not help), with the window beside it.
    const both = await call(windowed.key);
    expect(both.statusCode).toBe(403);
    expect(both.json().error.code).toBe('insufficient_user_quota');
    expect(both.json().error.message).toContain("the token's daily quota window cannot cover it either");
    expect(await loggedQuota(user.id, 12)).toBe(6_000);
    const [row] = await db().select().from(users).where(eq(users.id, user.id));
    expect(row!.quota).toBe(0);
  });
});
