import type { WindowAccount, WrittenDebit } from '@turnpike/core/billing/ledger';
import type { Db } from '@turnpike/core/db/client';
import { channels, logs, quotaData, quotaWindowUsage, tokens, users } from '@turnpike/core/db/schema/index';
import { LogType } from '@turnpike/core/domain/logs';
import { generateTokenKey } from '@turnpike/core/domain/tokens';
import { type BalanceChange, crossedThreshold } from '@turnpike/core/notify/notifier';
import { createChannelRepo } from '@turnpike/core/repos/channel.repo';
import { createTokenRepo } from '@turnpike/core/repos/token.repo';
import { createUserRepo } from '@turnpike/core/repos/user.repo';
import {
  createTestRuntime as createTestApp,
  type TestRuntime as TestApp,
} from '@turnpike/core/testing/test-runtime';
import { asc, eq, like } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeRecords } from './write-records.ts';
import { createBatchWriter } from './writer.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t?.close();
});

describe('batch writer', () => {
  it('aggregates counters and logs, and writes them all on close', async () => {
    const { db } = t.runtime.deps;
    const user = await createUserRepo(db).insert({ username: 'writer-user', password: 'x', quota: 100 });
    // An interval far beyond the test, and no flush when idle: only close() can write.
    const writer = createBatchWriter({ db, intervalMs: 3_600_000, flushWhenIdle: false });
    for (let i = 0; i < 5; i += 1) {
      writer.add({
        userId: user.id,
        tokenId: 0,
        channelId: 0,
        quota: 10,
        countRequest: true,
        log: {
          userId: user.id,
          createdAt: Math.floor(Date.now() / 1000),
          type: LogType.Consume,
          quota: 10,
          requestId: `writer-test-${i}`,
        },
      });
    }
    // An empty answer: logged, but neither charged nor counted.
    writer.add({ userId: user.id, tokenId: 0, channelId: 0, quota: 0, countRequest: false, log: undefined });
    expect(await db.select().from(logs).where(eq(logs.userId, user.id))).toEqual([]);
    await writer.close();
    const [row] = await db.select().from(users).where(eq(users.id, user.id));
    expect(row).toMatchObject({ usedQuota: 50, requestCount: 5, quota: 100 });
    expect(await db.select().from(logs).where(eq(logs.userId, user.id))).toHaveLength(5);
  });
});

/** A consume log as the pipeline writes it. */
const consume = (
  userId: number,
  fields: { model: string; createdAt: number; quota: number; tokens: number },
) => ({
  userId,
  tokenId: 0,
  channelId: 0,
  quota: fields.quota,
  countRequest: true,
  log: {
    userId,
    username: `dash-${userId}`,
    createdAt: fields.createdAt,
    type: LogType.Consume,
    modelName: fields.model,
    quota: fields.quota,
    promptTokens: fields.tokens - 1,
    completionTokens: 1,
  },
});

describe('dashboard counters (quota_data)', () => {
  const hour = 1_750_000_000 - (1_750_000_000 % 3600);
  const bucketsOf = (userId: number) =>
    t.runtime.deps.db
      .select()
      .from(quotaData)
      .where(eq(quotaData.userId, userId))
      .orderBy(asc(quotaData.createdAt), asc(quotaData.modelName));

  it('adds every consume to its (user, model, hour) bucket and increments existing rows', async () => {
    const { db } = t.runtime.deps;
    const user = await createUserRepo(db).insert({ username: 'dash-one', password: 'x', quota: 100 });
    const writer = createBatchWriter({
      db,
      intervalMs: 3_600_000,
      dashboard: () => true,
    });
    writer.add(consume(user.id, { model: 'gpt-4o', createdAt: hour + 10, quota: 5, tokens: 30 }));
    writer.add(consume(user.id, { model: 'gpt-4o', createdAt: hour + 3599, quota: 7, tokens: 20 }));
    writer.add(consume(user.id, { model: 'gpt-4o-mini', createdAt: hour + 20, quota: 1, tokens: 4 }));
    writer.add(consume(user.id, { model: 'gpt-4o', createdAt: hour + 3600, quota: 2, tokens: 3 }));
    await writer.flush();
    expect(await bucketsOf(user.id)).toMatchObject([
      {
        modelName: 'gpt-4o',
        createdAt: hour,
        count: 2,
        quota: 12,
        tokenUsed: 50,
        username: `dash-${user.id}`,
      },
      { modelName: 'gpt-4o-mini', createdAt: hour, count: 1, quota: 1, tokenUsed: 4 },
      { modelName: 'gpt-4o', createdAt: hour + 3600, count: 1, quota: 2, tokenUsed: 3 },
    ]);
    // A later flush (another process, say) adds to the same rows instead of inserting new ones.
    writer.add(consume(user.id, { model: 'gpt-4o', createdAt: hour + 60, quota: 3, tokens: 10 }));
    await writer.close();
    const rows = await bucketsOf(user.id);
    expect(rows).toHaveLength(3);
    expect(rows[0]).toMatchObject({ count: 3, quota: 15, tokenUsed: 60 });
  });

  it('writes the counters in the same transaction as the logs, so a flush that fails loses neither', async () => {
    const { db } = t.runtime.deps;
    const user = await createUserRepo(db).insert({ username: 'dash-two', password: 'x', quota: 100 });
    const writer = createBatchWriter({ db, intervalMs: 3_600_000, dashboard: () => true });
    writer.add(consume(user.id, { model: 'gpt-4o', createdAt: hour, quota: 5, tokens: 30 }));
    await writer.flush();
    expect(await db.select().from(logs).where(eq(logs.userId, user.id))).toHaveLength(1);
    expect(await bucketsOf(user.id)).toMatchObject([{ count: 1, quota: 5, tokenUsed: 30 }]);
    await writer.close();
  });

  it('counts nothing while DataExportEnabled is off', async () => {
    const { db } = t.runtime.deps;
    const user = await createUserRepo(db).insert({ username: 'dash-three', password: 'x', quota: 100 });
    const writer = createBatchWriter({
      db,
      intervalMs: 3_600_000,
      dashboard: () => false,
    });
    writer.add(consume(user.id, { model: 'gpt-4o', createdAt: hour, quota: 5, tokens: 30 }));
    await writer.close();
    expect(await db.select().from(logs).where(eq(logs.userId, user.id))).toHaveLength(1);
    expect(await bucketsOf(user.id)).toEqual([]);
  });
});

/** A writer that flushes only when told, and the debits it reports, one list per commit. */
function reportingWriter(db: Db) {
  const reported: WrittenDebit[][] = [];
  const writer = createBatchWriter({
    db,
    intervalMs: 3_600_000,
    flushWhenIdle: false,
    onDebitsWritten: (d) => reported.push(d),
  });
  return { writer, reported };
}

describe('quota window charges', () => {
  it("adds each window's charges to its slot with the debits and logs, and reports the version each slot got", async () => {
    const { db } = t.runtime.deps;
    const user = await createUserRepo(db).insert({ username: 'window-user', password: 'x', quota: 1000 });
    const { writer, reported } = reportingWriter(db);
    const today = `w:u:${user.id}|quota:day@1795824000` as const;
    const tomorrow = `w:u:${user.id}|quota:day@1795910400` as const;
    const requests = `w:u:${user.id}|requests:day@1795824000` as const;
    const call = (quota: number, windows: [WindowAccount, number][]) => ({
      ...consume(user.id, { model: 'gpt-4o', createdAt: 1_795_900_000, quota, tokens: 1 }),
      debit: { quota, fromToken: false },
      windows,
    });
    writer.add(
      call(30, [
        [today, 30],
        [requests, 1],
      ]),
    );
    writer.add(
      call(12, [
        [today, 12],
        [requests, 1],
      ]),
    );
    await writer.flush();
    // A call held yesterday and settled after midnight is charged to yesterday's slot, beside today's calls.
    writer.add(
      call(5, [
        [tomorrow, 5],
        [requests, 1],
      ]),
    );
    writer.add(call(7, [[today, 7]]));
    await writer.close();
    const slots = await db
      .select()
      .from(quotaWindowUsage)
      .where(like(quotaWindowUsage.windowKey, `u:${user.id}|%`))
      .orderBy(asc(quotaWindowUsage.windowKey), asc(quotaWindowUsage.slotStart));
    expect(slots).toEqual([
      { windowKey: `u:${user.id}|quota:day`, slotStart: 1_795_824_000, amount: 49, version: 2 },
      { windowKey: `u:${user.id}|quota:day`, slotStart: 1_795_910_400, amount: 5, version: 1 },
      { windowKey: `u:${user.id}|requests:day`, slotStart: 1_795_824_000, amount: 3, version: 2 },
    ]);
    // The logs and the windows add up to the same calls.
    const written = await db.select().from(logs).where(eq(logs.userId, user.id));
    expect(written.reduce((sum, log) => sum + log.quota, 0)).toBe(54);
    const windowsReported = reported.map((batch) => batch.filter((d) => d.account.startsWith('w:')));
    expect(
      windowsReported.map((batch) => [...batch].sort((a, b) => (a.account < b.account ? -1 : 1))),
    ).toEqual([
      [
        { account: today, amount: 42, version: 1 },
        { account: requests, amount: 2, version: 1 },
      ],
      [
        { account: today, amount: 7, version: 2 },
        { account: tomorrow, amount: 5, version: 1 },
        { account: requests, amount: 1, version: 2 },
      ],
    ]);
  });

  it("writes a replayed record's window charge once and reports it to be read again", async () => {
    const { db } = t.runtime.deps;
    const user = await createUserRepo(db).insert({ username: 'window-replay', password: 'x', quota: 1000 });
    const slot = `w:u:${user.id}|quota:week@1795737600` as const;
    const record = {
      journal: `replay-${user.id}`,
      seq: 1,
      dashboard: false,
      at: 0,
      write: {
        userId: user.id,
        tokenId: 0,
        channelId: 0,
        quota: 20,
        countRequest: true,
        log: undefined,
        debit: { quota: 20, fromToken: false },
        windows: [[slot, 20]] as [WindowAccount, number][],
      },
    };
    const first = await writeRecords(db, [record]);
    expect(first.debits).toContainEqual({ account: slot, amount: 20, version: 1 });
    const again = await writeRecords(db, [record]);
    expect(again.written).toBe(0);
    expect(again.debits).toContainEqual({ account: slot, amount: 20, version: 1, reread: true });
    const [row] = await db
      .select()
      .from(quotaWindowUsage)
      .where(like(quotaWindowUsage.windowKey, `u:${user.id}|%`));
    expect(row).toMatchObject({ amount: 20, version: 1 });
  });

  it('removes the slots no window counts any more (older than 40 days), at its first flush', async () => {
    const { db } = t.runtime.deps;
    const now = 1_795_910_400_000;
    await db.insert(quotaWindowUsage).values([
      { windowKey: 'u:999|quota:month', slotStart: now / 1000 - 41 * 86_400, amount: 5, version: 1 },
      { windowKey: 'u:999|quota:month', slotStart: now / 1000 - 31 * 86_400, amount: 6, version: 1 },
    ]);
    const writer = createBatchWriter({ db, intervalMs: 3_600_000, flushWhenIdle: false, now: () => now });
    writer.add({ userId: 0, tokenId: 0, channelId: 0, quota: 0, countRequest: false, log: undefined });
    await writer.close();
    const left = await db
      .select()
      .from(quotaWindowUsage)
      .where(eq(quotaWindowUsage.windowKey, 'u:999|quota:month'));
    expect(left.map((row) => row.amount)).toEqual([6]);
  });
});

describe('balance debits', () => {
  it('writes a debit with its log and counters in one commit and reports the ledger version each row got', async () => {
    const { db } = t.runtime.deps;
    const user = await createUserRepo(db).insert({ username: 'debit-user', password: 'x', quota: 100 });
    const { writer, reported } = reportingWriter(db);
    for (const quota of [9, 4]) {
      writer.add({
        ...consume(user.id, { model: 'gpt-4o', createdAt: 1_750_000_000, quota, tokens: 1 }),
        debit: { quota, fromToken: false },
      });
    }
    expect(writer.queuedLogs()).toBe(2);
    const [before] = await db.select().from(users).where(eq(users.id, user.id));
    expect(before).toMatchObject({ quota: 100, usedQuota: 0, requestCount: 0, ledgerVersion: 0 });
    await writer.close();
    expect(writer.queuedLogs()).toBe(0);
    const [after] = await db.select().from(users).where(eq(users.id, user.id));
    expect(after).toMatchObject({ quota: 87, usedQuota: 13, requestCount: 2, ledgerVersion: 1 });
    const written = await db.select().from(logs).where(eq(logs.userId, user.id));
    expect(written.reduce((sum, log) => sum + log.quota, 0)).toBe(13);
    expect(reported).toEqual([[{ account: `u:${user.id}`, amount: 13, version: 1 }]]);
  });

  it("takes a limited token's calls from its remaining quota and adds every call to its token's and channel's used quota", async () => {
    const { db } = t.runtime.deps;
    const user = await createUserRepo(db).insert({
      username: 'token-debit-user',
      password: 'x',
      quota: 1000,
    });
    const tokenRepo = createTokenRepo(db);
    const limited = await tokenRepo.insert({
      userId: user.id,
      key: generateTokenKey(),
      name: 'limited',
      remainQuota: 500,
    });
    const unlimited = await tokenRepo.insert({
      userId: user.id,
      key: generateTokenKey(),
      name: 'unlimited',
      remainQuota: 0,
      unlimitedQuota: true,
    });
    const [channel] = await createChannelRepo(db).insertMany([
      { type: 1, name: 'writer channel', key: 'k', models: 'gpt-4o', group: 'default' },
    ]);
    const { writer, reported } = reportingWriter(db);
    const call = (tokenId: number, quota: number, fromToken: boolean) =>
      writer.add({
        ...consume(user.id, { model: 'gpt-4o', createdAt: 1_750_000_000, quota, tokens: 1 }),
        tokenId,
        channelId: channel!.id,
        debit: { quota, fromToken },
      });
    call(limited.id, 30, true);
    call(unlimited.id, 7, false);
    call(limited.id, 12, true);
    await writer.close();
    const rows = await db.select().from(tokens).where(eq(tokens.userId, user.id));
    expect(rows.find((row) => row.id === limited.id)).toMatchObject({
      remainQuota: 458,
      usedQuota: 42,
      ledgerVersion: 1,
    });
    expect(rows.find((row) => row.id === unlimited.id)).toMatchObject({
      remainQuota: 0,
      usedQuota: 7,
      ledgerVersion: 0,
    });
    const [channelRow] = await db.select().from(channels).where(eq(channels.id, channel!.id));
    expect(channelRow!.usedQuota).toBe(49);
    const [userRow] = await db.select().from(users).where(eq(users.id, user.id));
    expect(userRow).toMatchObject({ quota: 951, usedQuota: 49, requestCount: 3, ledgerVersion: 1 });
    expect(reported).toEqual([
      [
        { account: `u:${user.id}`, amount: 49, version: 1 },
        { account: `t:${limited.id}`, amount: 42, version: 1 },
      ],
    ]);
  });

  it('reports the debit of a user whose row is gone, so the ledger does not hold it as outstanding for ever', async () => {
    const { db } = t.runtime.deps;
    const { writer, reported } = reportingWriter(db);
    const gone = 987_654;
    writer.add({
      userId: gone,
      tokenId: 0,
      channelId: 0,
      quota: 5,
      countRequest: true,
      log: undefined,
      debit: { quota: 5, fromToken: false },
    });
    await writer.close();
    expect(reported).toEqual([[{ account: `u:${gone}`, amount: 5, version: 0 }]]);
  });

  it('shows a debt instead of hiding it behind a clamp at zero', async () => {
    const { db } = t.runtime.deps;
    const user = await createUserRepo(db).insert({ username: 'debt-user', password: 'x', quota: 10 });
    const writer = createBatchWriter({ db, intervalMs: 3_600_000 });
    writer.add({
      ...consume(user.id, { model: 'gpt-4o', createdAt: 1_750_000_000, quota: 13, tokens: 1 }),
      debit: { quota: 13, fromToken: false },
    });
    await writer.close();
    const [row] = await db.select().from(users).where(eq(users.id, user.id));
    expect(row!.quota).toBe(-3);
  });
});

describe('balance reports for low-balance notices', () => {
  it('reports each debit with the balance before and after, so two writers never both see one crossing', async () => {
    const { db } = t.runtime.deps;
    const user = await createUserRepo(db).insert({ username: 'crossing-user', password: 'x', quota: 1000 });
    const seen: BalanceChange[] = [];
    const writers = [0, 1].map(() =>
      createBatchWriter({ db, intervalMs: 3_600_000, onUserBalances: (changes) => seen.push(...changes) }),
    );
    for (const writer of writers)
      writer.add({
        ...consume(user.id, { model: 'gpt-4o', createdAt: 1_750_000_000, quota: 300, tokens: 1 }),
        debit: { quota: 300, fromToken: false },
      });
    await Promise.all(writers.map((w) => w.close()));
    expect(seen.map((c) => [c.before, c.after]).sort((a, b) => b[0]! - a[0]!)).toEqual([
      [1000, 700],
      [700, 400],
    ]);
    expect(seen.filter((c) => crossedThreshold(c, 500))).toHaveLength(1);
  });
});
