import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasRedisServer, startTestRedisServer, type TestRedisServer } from '../testing/redis-server.ts';
import { type Account, type AccountBase, type BaseLoader, userAccount } from './ledger.ts';
import { connectLedgerRedis } from './open-ledger.ts';
import { createRedisLedger, type RedisLedger } from './redis-ledger.ts';

const U = userAccount(1);

/** Balances with ledger versions, as the database holds them. */
function database(balance: number) {
  let row: AccountBase = { balance, version: 0 };
  const loadBases: BaseLoader = async (accounts) =>
    new Map(accounts.filter((a) => a === U).map((a) => [a, { ...row }] as [Account, AccountBase]));
  return {
    loadBases,
    debit(amount: number) {
      row = { balance: row.balance - amount, version: row.version + 1 };
      return row.version;
    },
  };
}

async function until(check: () => boolean | Promise<boolean>, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe.skipIf(!hasRedisServer())('ledger shared through Redis', () => {
  let server: TestRedisServer;
  const open: { ledger: RedisLedger; redis: Redis }[] = [];
  beforeAll(async () => {
    server = await startTestRedisServer();
  });
  afterAll(async () => {
    for (const { ledger, redis } of open) {
      await ledger.close().catch(() => undefined);
      redis.disconnect();
    }
    await server?.close();
  });

  async function process(
    db: ReturnType<typeof database>,
    prefix: string,
    settings: { leaseMs?: number; renewMs?: number; trustQuota?: number } = {},
  ) {
    const redis = await connectLedgerRedis(server.url);
    const ledger = createRedisLedger({
      redis,
      keyPrefix: prefix,
      loadBases: db.loadBases,
      trustQuota: () => settings.trustQuota ?? 1_000_000,
      leaseMs: settings.leaseMs ?? 2_000,
      renewMs: settings.renewMs ?? 100,
    });
    await ledger.start();
    open.push({ ledger, redis });
    return { ledger, redis };
  }
  const prefix = () => `t${randomBytes(4).toString('hex')}:`;

  it('admits concurrent requests on two processes only while the one balance covers them', async () => {
    const db = database(150);
    const p = prefix();
    const a = await process(db, p);
    const b = await process(db, p);
    const results = await Promise.all(
      Array.from({ length: 300 }, (_, i) => (i % 2 === 0 ? a : b).ledger.hold([U], 1)),
    );
    const admitted = results.filter((r) => r.ok);
    expect(admitted).toHaveLength(150);
    // Each settles its own; the writers commit and report, in the opposite order of their commits.
    for (const [i, result] of results.entries())
      if (result.ok) await (i % 2 === 0 ? a : b).ledger.settle(result.hold, 1);
    const fromA = results.filter((r, i) => r.ok && i % 2 === 0).length;
    const versionA = db.debit(fromA);
    const versionB = db.debit(150 - fromA);
    b.ledger.written([{ account: U, amount: 150 - fromA, version: versionB }]);
    a.ledger.written([{ account: U, amount: fromA, version: versionA }]);
    await until(async () => Number(await a.redis.get(`${p}{ledger}:out:${U}`)) === 0);
    // Nothing left, nothing counted twice: a new process reading the database sees 0 as well.
    const c = await process(db, p);
    expect(await c.ledger.hold([U], 1)).toEqual({ ok: false, account: U, available: 0 });
  });

  it('releases the holds of a process that stopped answering once its lease runs out', async () => {
    const db = database(100);
    const p = prefix();
    const dying = await process(db, p, { leaseMs: 400, renewMs: 100 });
    const held = await dying.ledger.hold([U], 70);
    expect(held.ok).toBe(true);
    const other = await process(db, p, { leaseMs: 400, renewMs: 100 });
    expect((await other.ledger.hold([U], 50)).ok).toBe(false);
    // The process is cut off (a crash, a partition): its lease is never renewed again.
    dying.redis.disconnect();
    const started = Date.now();
    let admitted = false;
    await until(async () => {
      const result = await other.ledger.hold([U], 50);
      admitted = result.ok;
      return admitted;
    });
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('keeps admitting within the trust line while Redis is down, and shares what it owes when Redis is back', async () => {
    const db = database(1000);
    const p = prefix();
    const a = await process(db, p, { trustQuota: 100 });
    const first = await a.ledger.hold([U], 10);
    if (!first.ok) throw new Error('admitted');
    await a.ledger.settle(first.hold, 10);

    await server.stop();
    const during = [];
    for (let i = 0; i < 12; i += 1) during.push(await a.ledger.hold([U], 10));
    expect(a.ledger.isDegraded()).toBe(true);
    // The trust line (100) bounds what one process admits on its own view.
    expect(during.filter((r) => r.ok)).toHaveLength(10);
    for (const result of during) if (result.ok) await a.ledger.settle(result.hold, 10);

    await server.start();
    await until(() => !a.ledger.isDegraded());
    // Redis came back empty; the process registered what it owes (110 not yet written), so another process
    // reading the database's 1000 can admit 890 and not one more.
    const b = await process(db, p);
    expect((await b.ledger.hold([U], 891)).ok).toBe(false);
    expect((await b.ledger.hold([U], 890)).ok).toBe(true);
  });
});
