/**
 * A plan's allowance in the relay (docs/adr/0049), as a subscriber meets it, on the back end of the run (the embedded
 * default: PGlite and the memory ledger; or Postgres and Redis): the allowance pays first, the wallet only once the
 * allowance cannot cover a call; served calls × price = allowance drop + wallet drop = consume logs; the allowance
 * starts again when its period does (renewed) and stops paying at the subscription's end (expired).
 *
 * Prices: `ModelPrice` of gpt-4o-mini set to $0.001 a call, and 500,000 quota a dollar (the `QuotaPerUnit` default):
 * every call holds and costs 500 quota. The allowance is chosen against that 500 and written as a literal.
 */
import { logs, quotaWindowUsage, tokens, userSubscriptions, users } from '@turnpike/core/db/schema/index';
import { LogType } from '@turnpike/core/domain/logs';
import { and, eq, like } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pruneWindowSlots } from './books/write-records.ts';
import { type FakeOpenAi, startFakeOpenAi } from './testing/fake-openai.ts';
import { createRelayTestApp, type RelayTestApp } from './testing/relay-test-app.ts';
import { sleep } from './testing/wait.ts';

/** Quota one call holds and costs: $0.001 × 500,000. */
const PER_CALL = 500;

/** 2026-11-28 23:59:00 UTC: a minute before a daily allowance starts again (QuotaWindowTimeZone is UTC). */
const BEFORE_MIDNIGHT = 1_795_910_340;
/** 2026-11-28 00:00:00 and 2026-11-29 00:00:00 UTC. */
const NOV_28 = 1_795_824_000;
const NOV_29 = 1_795_910_400;

let t: RelayTestApp;
let fake: FakeOpenAi;
let clock = BEFORE_MIDNIGHT;

const db = () => t.runtime.deps.db;

const call = (key: string) =>
  t.relay.inject({
    method: 'POST',
    url: '/v1/chat/completions',
    headers: { authorization: `Bearer sk-${key}` },
    payload: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello plans' }] },
  });

const burst = (n: number, key: string) => Promise.all(Array.from({ length: n }, () => call(key)));
const served = (answers: readonly LightMyRequestResponse[]) => answers.filter((a) => a.statusCode === 200);

/** Waits until the user's consume logs number `count`; answers them. */
async function consumeLogs(userId: number, count: number) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const rows = await db()
      .select({ quota: logs.quota, other: logs.other })
      .from(logs)
      .where(and(eq(logs.userId, userId), eq(logs.type, LogType.Consume)));
    if (rows.length >= count || Date.now() > deadline) {
      expect(rows).toHaveLength(count);
      return rows;
    }
    await sleep(20);
  }
}

/** Waits until the user's balance is `expected` (the writer flushes in batches). */
async function walletOf(userId: number, expected: number): Promise<number> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const [row] = await db().select({ quota: users.quota }).from(users).where(eq(users.id, userId));
    if (row?.quota === expected || Date.now() > deadline) return row?.quota ?? Number.NaN;
    await sleep(20);
  }
}

const allowanceRows = (subscriptionId: number) =>
  db()
    .select({
      key: quotaWindowUsage.windowKey,
      slot: quotaWindowUsage.slotStart,
      amount: quotaWindowUsage.amount,
    })
    .from(quotaWindowUsage)
    .where(like(quotaWindowUsage.windowKey, `p:${subscriptionId}|%`))
    .orderBy(quotaWindowUsage.slotStart);

/** A subscription as a bought plan leaves it: 7,200 quota a day, for ten days from 2026-11-28. */
async function subscribe(userId: number, fields: Partial<typeof userSubscriptions.$inferInsert> = {}) {
  const [row] = await db()
    .insert(userSubscriptions)
    .values({
      userId,
      planId: 1,
      amountTotal: 7_200,
      quotaResetPeriod: 'daily',
      startTime: NOV_28,
      endTime: NOV_28 + 10 * 86_400,
      status: 'active',
      ...fields,
    })
    .returning();
  return row!;
}

beforeAll(async () => {
  fake = await startFakeOpenAi({ headersDelayMs: 50 });
  t = await createRelayTestApp();
  await t.runtime.deps.options.set('ModelPrice', JSON.stringify({ 'gpt-4o-mini': 0.001 }));
  await t.seedChannel({ key: 'sk-upstream', baseUrl: fake.url, models: 'gpt-4o-mini' });
  await t.startRelay({ windowClock: () => clock });
});

afterAll(async () => {
  await t?.close();
  await fake?.close();
});

describe("a plan's allowance", () => {
  it('pays before the wallet under 30 calls at once; served × price = allowance drop + wallet drop = logs', async () => {
    clock = BEFORE_MIDNIGHT;
    const user = await t.seedUser({ quota: 1_000_000 });
    const sub = await subscribe(user.id);
    const token = await t.seedToken(user.id);
    const answers = await burst(30, token.key);
    expect(served(answers)).toHaveLength(30);
    const rows = await consumeLogs(user.id, 30);
    // 7,200 covers 14 calls of 500 (7,000): those are the allowance's, the other 16 the wallet's.
    const byPlan = rows.filter((row) => JSON.parse(row.other).billing_source === 'subscription');
    expect(byPlan).toHaveLength(14);
    expect(rows.reduce((sum, row) => sum + row.quota, 0)).toBe(30 * PER_CALL);
    expect(await walletOf(user.id, 1_000_000 - 16 * PER_CALL)).toBe(1_000_000 - 8_000);
    expect(await allowanceRows(sub.id)).toEqual([
      { key: `p:${sub.id}|quota:day`, slot: NOV_28, amount: 7_000 },
    ]);
    // The hourly prune of old window slots keeps an allowance's: a plan's period can be its whole term (a year).
    await pruneWindowSlots(db(), NOV_28 + 400 * 86_400);
    expect(await allowanceRows(sub.id)).toHaveLength(1);
    // Used quota counts every call, whoever paid.
    const [row] = await db().select().from(users).where(eq(users.id, user.id));
    expect(row?.usedQuota).toBe(30 * PER_CALL);
  });

  it('starts again the next day (renewed), and stops paying at the end of the subscription (expired)', async () => {
    clock = BEFORE_MIDNIGHT;
    const user = await t.seedUser({ quota: 100_000 });
    // Ends at 2026-11-29 00:10: the second day's allowance lasts ten minutes.
    const sub = await subscribe(user.id, { endTime: NOV_29 + 600 });
    const token = await t.seedToken(user.id);
    expect(served(await burst(16, token.key))).toHaveLength(16);
    await consumeLogs(user.id, 16);
    expect(await walletOf(user.id, 100_000 - 2 * PER_CALL)).toBe(99_000);

    clock = NOV_29 + 60;
    expect(served(await burst(16, token.key))).toHaveLength(16);
    await consumeLogs(user.id, 32);
    expect(await walletOf(user.id, 100_000 - 4 * PER_CALL)).toBe(98_000);
    expect(await allowanceRows(sub.id)).toEqual([
      { key: `p:${sub.id}|quota:day`, slot: NOV_28, amount: 7_000 },
      { key: `p:${sub.id}|quota:day`, slot: NOV_29, amount: 7_000 },
    ]);

    // Past the end nothing comes from the allowance, though the row still says active (the job has not run).
    clock = NOV_29 + 601;
    expect(served(await burst(4, token.key))).toHaveLength(4);
    const rows = await consumeLogs(user.id, 36);
    expect(await walletOf(user.id, 98_000 - 4 * PER_CALL)).toBe(96_000);
    expect(rows.filter((row) => JSON.parse(row.other).billing_source === 'subscription')).toHaveLength(28);
  });

  it('with a limited token, the token pays its part of every call, from the allowance or the wallet', async () => {
    clock = BEFORE_MIDNIGHT;
    const user = await t.seedUser({ quota: 10_000 });
    await subscribe(user.id, { amountTotal: 1_000 });
    const token = await t.seedToken(user.id, { unlimitedQuota: false, remainQuota: 2_000 });
    // The token's 2,000 covers 4 calls: 2 paid by the allowance (1,000), 2 by the wallet.
    const answers = await burst(6, token.key);
    expect(served(answers)).toHaveLength(4);
    for (const refused of answers.filter((a) => a.statusCode !== 200)) expect(refused.statusCode).toBe(403);
    await consumeLogs(user.id, 4);
    expect(await walletOf(user.id, 10_000 - 2 * PER_CALL)).toBe(9_000);
    const deadline = Date.now() + 10_000;
    let remain = -1;
    while (Date.now() < deadline) {
      const [row] = await db().select().from(tokens).where(eq(tokens.id, token.id));
      remain = row?.remainQuota ?? -1;
      if (remain === 0) break;
      await sleep(20);
    }
    expect(remain).toBe(0);
  });

  it('an empty wallet is served by the allowance alone, and refused once it is spent', async () => {
    clock = BEFORE_MIDNIGHT;
    const user = await t.seedUser({ quota: 0 });
    await subscribe(user.id, { amountTotal: 1_600 });
    const token = await t.seedToken(user.id);
    const answers = await burst(5, token.key);
    expect(served(answers)).toHaveLength(3);
    for (const refused of answers.filter((a) => a.statusCode !== 200)) {
      expect(refused.statusCode).toBe(403);
      expect(refused.json().error.code).toBe('insufficient_user_quota');
    }
    await consumeLogs(user.id, 3);
    expect(await walletOf(user.id, 0)).toBe(0);
  });
});
