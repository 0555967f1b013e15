/**
 * Settled calls survive what a relay cannot control (docs/adr/0022): a record is written exactly once whoever
 * replays it, a spool left by a process killed before its flush is written at the next start, and a flush that
 * fails while the database is away keeps its records for the next one.
 */
import { existsSync, readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createDb } from '@turnpike/core/db/client';
import { migrate } from '@turnpike/core/db/migrate';
import { logs, quotaData, users } from '@turnpike/core/db/schema/index';
import { LogType } from '@turnpike/core/domain/logs';
import { createUserRepo } from '@turnpike/core/repos/user.repo';
import { startTcpProxy } from '@turnpike/core/testing/tcp-proxy';
import {
  createTestRuntime as createTestApp,
  createTestDatabaseUrl,
  type TestRuntime as TestApp,
} from '@turnpike/core/testing/test-runtime';
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSettlementSpool, recoverSettlementSpools } from './settlement-spool.ts';
import { type SettlementRecord, type UsageWrite, writeRecords } from './write-records.ts';
import { createBatchWriter, newJournalId } from './writer.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t?.close();
});

const paid = (userId: number, quota: number, requestId: string): UsageWrite => ({
  userId,
  tokenId: 0,
  channelId: 0,
  quota,
  countRequest: true,
  debit: { quota, fromToken: false },
  log: {
    userId,
    username: `u${userId}`,
    createdAt: Math.floor(Date.now() / 1000),
    type: LogType.Consume,
    modelName: 'paid-model',
    quota,
    promptTokens: 3,
    completionTokens: 4,
    requestId,
  },
});

/** What the database holds for a user: balance, used quota, requests, log count and sum, dashboard sum. */
async function books(userId: number) {
  const { db } = t.runtime.deps;
  const [row] = await db.select().from(users).where(eq(users.id, userId));
  const [logged] = await db
    .select({
      count: sql<number>`count(*)`.mapWith(Number),
      quota: sql<number>`coalesce(sum(${logs.quota}), 0)`.mapWith(Number),
      distinct: sql<number>`count(distinct ${logs.requestId})`.mapWith(Number),
    })
    .from(logs)
    .where(eq(logs.userId, userId));
  const [counted] = await db
    .select({ quota: sql<number>`coalesce(sum(${quotaData.quota}), 0)`.mapWith(Number) })
    .from(quotaData)
    .where(eq(quotaData.userId, userId));
  return {
    quota: row?.quota,
    usedQuota: row?.usedQuota,
    requests: row?.requestCount,
    logs: logged?.count,
    distinctRequests: logged?.distinct,
    logged: logged?.quota,
    dashboard: counted?.quota,
  };
}

describe('settlement records', () => {
  it('are written exactly once whoever replays them, the replay reporting the charges for a re-read', async () => {
    const { db } = t.runtime.deps;
    const user = await createUserRepo(db).insert({ username: 'replayed', password: 'x', quota: 1000 });
    const journal = newJournalId();
    const records: SettlementRecord[] = [1, 2, 3].map((seq) => ({
      journal,
      seq,
      write: paid(user.id, 10 * seq, `replayed-${seq}`),
      dashboard: true,
      at: Date.now(),
    }));
    const first = await writeRecords(db, records.slice(0, 2));
    expect(first.written).toBe(2);
    expect(first.debits).toEqual([{ account: `u:${user.id}`, amount: 30, version: 1 }]);
    // A replay of all three (the dead process's journal, say) writes only the third.
    const second = await writeRecords(db, records);
    expect(second.written).toBe(1);
    expect(second.debits).toEqual([
      { account: `u:${user.id}`, amount: 30, version: 2 },
      { account: `u:${user.id}`, amount: 30, version: 2, reread: true },
    ]);
    expect((await writeRecords(db, records)).written).toBe(0);
    expect(await books(user.id)).toEqual({
      quota: 940,
      usedQuota: 60,
      requests: 3,
      logs: 3,
      distinctRequests: 3,
      logged: 60,
      dashboard: 60,
    });
  });
});

describe('a backlog', () => {
  it('is written in transactions of bounded size, all of it, each reported as it commits', async () => {
    const { db } = t.runtime.deps;
    const user = await createUserRepo(db).insert({ username: 'backlog', password: 'x', quota: 1_000_000 });
    const reported: { upTo: number; amount: number }[] = [];
    const writer = createBatchWriter({
      db,
      intervalMs: 3_600_000,
      onDebitsWritten: (debits, upTo) => reported.push({ upTo, amount: debits[0]?.amount ?? 0 }),
    });
    for (let i = 0; i < 12_000; i += 1) writer.add(paid(user.id, 1, `backlog-${i}`));
    await writer.close();
    expect(reported).toEqual([
      { upTo: 5_000, amount: 5_000 },
      { upTo: 10_000, amount: 5_000 },
      { upTo: 12_000, amount: 2_000 },
    ]);
    expect(writer.backlog().records).toBe(0);
    expect(await books(user.id)).toMatchObject({ quota: 988_000, logs: 12_000, distinctRequests: 12_000 });
  }, 60_000);
});

describe('the local spool', () => {
  it('leaves what a killed process had not written for the next start, which writes it once', async () => {
    const { db } = t.runtime.deps;
    const user = await createUserRepo(db).insert({ username: 'spooled', password: 'x', quota: 1000 });
    const dir = path.join(os.tmpdir(), `turnpike-spool-${newJournalId()}`);
    const journal = newJournalId();
    const spool = openSettlementSpool(dir, journal);
    // An interval far beyond the test, and no flush when idle: only an explicit flush writes.
    const writer = createBatchWriter({
      db,
      journal,
      intervalMs: 3_600_000,
      flushWhenIdle: false,
      dashboard: () => true,
      durability: { journal: () => {}, attach: () => {}, spool },
    });
    for (let i = 0; i < 3; i += 1) writer.add(paid(user.id, 10, `spooled-${i}`));
    await writer.flush();
    for (let i = 3; i < 7; i += 1) writer.add(paid(user.id, 10, `spooled-${i}`));
    // The process is killed here: the last four were served and settled, and never flushed.
    expect(await books(user.id)).toMatchObject({ quota: 970, logs: 3 });
    expect(await recoverSettlementSpools(db, dir, 'the-next-run')).toBe(4);
    expect(await books(user.id)).toEqual({
      quota: 930,
      usedQuota: 70,
      requests: 7,
      logs: 7,
      distinctRequests: 7,
      logged: 70,
      dashboard: 70,
    });
    expect(readdirSync(dir)).toEqual([]);
    expect(await recoverSettlementSpools(db, dir, 'the-next-run')).toBe(0);
  });

  it('is removed on a clean close, every record being written', async () => {
    const { db } = t.runtime.deps;
    const user = await createUserRepo(db).insert({ username: 'closed', password: 'x', quota: 100 });
    const dir = path.join(os.tmpdir(), `turnpike-spool-${newJournalId()}`);
    const journal = newJournalId();
    const writer = createBatchWriter({
      db,
      journal,
      intervalMs: 3_600_000,
      durability: { journal: () => {}, attach: () => {}, spool: openSettlementSpool(dir, journal) },
    });
    writer.add(paid(user.id, 10, 'closed-1'));
    expect(existsSync(path.join(dir, `${journal}.jsonl`))).toBe(true);
    await writer.close();
    expect(readdirSync(dir)).toEqual([]);
    expect(await books(user.id)).toMatchObject({ quota: 90, logs: 1 });
  });
});

describe.skipIf(!process.env.TEST_POSTGRES_URL)('a database outage', () => {
  it('keeps a failed flush for the next one, refuses past its cap, and writes everything once the database is back', async () => {
    const created = await createTestDatabaseUrl();
    const proxy = await startTcpProxy(created.url as string);
    const database = await createDb({ url: proxy.urlThrough(created.url as string) });
    try {
      await migrate(database);
      const { db } = database;
      const user = await createUserRepo(db).insert({ username: 'outage', password: 'x', quota: 1000 });
      const errors: unknown[] = [];
      const writer = createBatchWriter({
        db,
        intervalMs: 20,
        maxQueued: 5,
        onError: (error) => errors.push(error),
      });
      await proxy.refuse();
      proxy.resetAll();
      for (let i = 0; i < 5; i += 1) writer.add(paid(user.id, 10, `outage-${i}`));
      await expect(writer.flush()).rejects.toThrow();
      // The timer's flushes fail too, and are reported, not left unhandled.
      await expect.poll(() => errors.length, { timeout: 5_000 }).toBeGreaterThan(0);
      expect(writer.backlog().records).toBe(5);
      expect(writer.isFull()).toBe(true);
      await proxy.restore();
      await expect.poll(() => writer.backlog().records, { timeout: 10_000 }).toBe(0);
      expect(writer.isFull()).toBe(false);
      await writer.close();
      const [row] = await db.select().from(users).where(eq(users.id, user.id));
      expect(row).toMatchObject({ quota: 950, usedQuota: 50, requestCount: 5 });
      const written = await db.select().from(logs).where(eq(logs.userId, user.id));
      expect(written.map((log) => log.requestId).sort()).toEqual([0, 1, 2, 3, 4].map((i) => `outage-${i}`));
    } finally {
      await database.close();
      await proxy.close();
      await created.drop();
    }
  });
});
