import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasRedisServer, startTestRedisServer, type TestRedisServer } from '../testing/redis-server.ts';
import { type WindowDatabase, windowDatabase, windowLedgerCases } from '../testing/window-ledger-cases.ts';
import {
  type Account,
  type AccountBase,
  type BaseLoader,
  type HoldResult,
  heldOn,
  userAccount,
  type WindowClaim,
} from './ledger.ts';
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
    db: { loadBases: BaseLoader },
    prefix: string,
    settings: { leaseMs?: number; renewMs?: number } = {},
  ) {
    const redis = await connectLedgerRedis(server.url);
    const ledger = createRedisLedger({
      redis,
      keyPrefix: prefix,
      loadBases: db.loadBases,
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

  it('admits each relay its share of the last known balance while Redis is down, refusing as degraded past it, and shares what they owe when Redis is back', async () => {
    const db = database(1000);
    const p = prefix();
    const a = await process(db, p);
    const b = await process(db, p);
    await until(() => a.ledger.liveProcesses() === 2 && b.ledger.liveProcesses() === 2);
    const first = await a.ledger.hold([U], 10);
    if (!first.ok) throw new Error('admitted');
    await a.ledger.settle(first.hold, 10);

    await server.stop();
    const fromA = [];
    const fromB = [];
    for (let i = 0; i < 60; i += 1) {
      fromA.push(await a.ledger.hold([U], 10));
      fromB.push(await b.ledger.hold([U], 10));
    }
    expect(a.ledger.isDegraded()).toBe(true);
    expect(b.ledger.isDegraded()).toBe(true);
    // a last saw 990 available, b reads the database's 1000: each admits half of what it knows.
    expect(fromA.filter((r) => r.ok)).toHaveLength(49);
    expect(fromB.filter((r) => r.ok)).toHaveLength(50);
    const admitted = 10 + 10 * [...fromA, ...fromB].filter((r) => r.ok).length;
    expect(admitted).toBeLessThanOrEqual(1000);
    // Past its share a refusal says the gateway is degraded, not that the balance is empty.
    for (const refused of [...fromA, ...fromB].filter((r) => !r.ok))
      expect(refused).toMatchObject({ degraded: true });
    for (const result of fromA) if (result.ok) await a.ledger.settle(result.hold, 10);
    for (const result of fromB) if (result.ok) await b.ledger.settle(result.hold, 10);

    const stopped = Date.now();
    await server.start();
    await until(() => !a.ledger.isDegraded() && !b.ledger.isDegraded());
    // Back within a second of Redis answering again.
    expect(Date.now() - stopped).toBeLessThan(3_000);
    // Redis came back empty; both registered what they owe (1000, nothing written yet), so a process reading the
    // database's 1000 can admit nothing more.
    const c = await process(db, p);
    expect(await c.ledger.hold([U], 1)).toMatchObject({ ok: false, available: 0 });
  });

  it('counts what it admitted while degraded against its next degraded share: Redis flapping twice never lets it admit the same balance twice', async () => {
    const db = database(1000);
    const p = prefix();
    const a = await process(db, p);
    const first = await a.ledger.hold([U], 10);
    if (!first.ok) throw new Error('admitted');
    const admitted: HoldResult[] = [first];

    for (let outage = 0; outage < 2; outage += 1) {
      await server.stop();
      for (let i = 0; i < 120; i += 1) admitted.push(await a.ledger.hold([U], 10));
      expect(a.ledger.isDegraded()).toBe(true);
      await server.start();
      await until(() => !a.ledger.isDegraded());
    }
    // 1000 covers 100 holds of 10, whatever Redis did in between: the first outage admits the 99 left, the second
    // none, since Redis came back without the base and this process still owes all of it.
    const served = admitted.filter((r) => r.ok).length;
    expect(served * 10).toBeLessThanOrEqual(1000);
    expect(served).toBe(100);
  });

  it('admits nothing on its own view in a process that never reached Redis', async () => {
    const db = database(1000);
    const p = prefix();
    await server.stop();
    try {
      const redis = await connectLedgerRedis(server.url);
      const lonely = createRedisLedger({ redis, keyPrefix: p, loadBases: db.loadBases, renewMs: 100 });
      await lonely.start();
      open.push({ ledger: lonely, redis });
      expect(await lonely.hold([U], 1)).toMatchObject({ ok: false, degraded: true });
    } finally {
      await server.start();
    }
  });

  it("keeps a dead process's journaled charges outstanding until another process writes them, once", async () => {
    const db = database(100);
    const p = prefix();
    const dying = await process(db, p, { leaseMs: 400, renewMs: 100 });
    const other = await process(db, p, { leaseMs: 400, renewMs: 100 });
    for (let seq = 1; seq <= 3; seq += 1) {
      const held = await dying.ledger.hold([U], 20);
      if (!held.ok) throw new Error('admitted');
      await dying.ledger.settle(held.hold, 20);
      dying.ledger.journal({ seq, payload: `record-${seq}`, charges: [[U, 20]] });
    }
    await dying.redis.ping();
    // Killed before its writer wrote the three calls (the database was away, say).
    dying.redis.disconnect();
    await until(async () => (await other.redis.scard(`${p}{ledger}:orphans`)) === 1);
    // Its lease ran out, but what it charged is still outstanding: no overdraft against the unwritten calls.
    expect(await other.ledger.hold([U], 41)).toMatchObject({ ok: false, available: 40 });
    const written: string[] = [];
    const count = await other.ledger.drainOrphans(async (payloads) => {
      written.push(...payloads);
      db.debit(60);
    });
    expect(count).toBe(3);
    expect(written).toEqual(['record-1', 'record-2', 'record-3']);
    // Written: the charges left the outstanding amount and the base was read again, at 40.
    expect(await other.ledger.hold([U], 41)).toMatchObject({ ok: false, available: 40 });
    expect((await other.ledger.hold([U], 40)).ok).toBe(true);
    expect(await other.ledger.drainOrphans(async () => {})).toBe(0);
    expect(await other.redis.scard(`${p}{ledger}:orphans`)).toBe(0);
  });

  it('trims its journal as its writer reports entries written, so a clean stop leaves no orphan', async () => {
    const db = database(100);
    const p = prefix();
    const a = await process(db, p);
    for (let seq = 1; seq <= 2; seq += 1) {
      const held = await a.ledger.hold([U], 10);
      if (!held.ok) throw new Error('admitted');
      await a.ledger.settle(held.hold, 10);
      a.ledger.journal({ seq, payload: `record-${seq}`, charges: [[U, 10]] });
    }
    await a.redis.ping();
    const streams = async () => {
      const keys = await a.redis.keys(`${p}{ledger}:journal:*`);
      return Promise.all(keys.map((key) => a.redis.xlen(key)));
    };
    expect(await streams()).toEqual([2]);
    a.ledger.written([{ account: U, amount: 20, version: db.debit(20) }], 2);
    await until(async () => (await streams()).every((n) => n === 0));
    expect(Number(await a.redis.get(`${p}{ledger}:out:${U}`))).toBe(0);
    await a.ledger.close();
    expect(await a.redis.scard(`${p}{ledger}:orphans`)).toBe(0);
    expect(await a.redis.keys(`${p}{ledger}:jrn:*`)).toEqual([]);
  });

  it('refuses as degraded an account it cannot read while the database is away, without giving up Redis', async () => {
    const db = database(100);
    let reachable = true;
    const p = prefix();
    const redis = await connectLedgerRedis(server.url);
    const ledger = createRedisLedger({
      redis,
      keyPrefix: p,
      loadBases: (accounts) =>
        reachable ? db.loadBases(accounts) : Promise.reject(new Error('ECONNREFUSED')),
    });
    await ledger.start();
    open.push({ ledger, redis });
    reachable = false;
    expect(await ledger.hold([U], 10)).toMatchObject({ ok: false, degraded: true });
    expect(ledger.isDegraded()).toBe(false);
    reachable = true;
    await until(async () => (await ledger.hold([U], 10)).ok);
  });

  it('keeps its view of a recently held account fresh with each renewal, so a degraded share starts from now', async () => {
    const db = database(100);
    const p = prefix();
    const a = await process(db, p);
    const b = await process(db, p);
    expect((await a.ledger.hold([U], 10)).ok).toBe(true);
    expect(a.ledger.available(U)).toBe(90);
    expect((await b.ledger.hold([U], 50)).ok).toBe(true);
    // a never answered a call of b's, yet within a renewal it knows the 50 are taken.
    await until(() => a.ledger.available(U) === 40);
  });

  it('serves from a base marked stale by a reap while the database cannot be read, and reads it again once it can', async () => {
    const db = database(100);
    let reachable = true;
    const p = prefix();
    const settings = { leaseMs: 400, renewMs: 100 };
    const dying = await process(db, p, settings);
    const redis = await connectLedgerRedis(server.url);
    const other = createRedisLedger({
      redis,
      keyPrefix: p,
      ...settings,
      loadBases: (accounts) =>
        reachable ? db.loadBases(accounts) : Promise.reject(new Error('ECONNREFUSED')),
    });
    await other.start();
    open.push({ ledger: other, redis });
    expect((await dying.ledger.hold([U], 30)).ok).toBe(true);
    dying.redis.disconnect();
    reachable = false;
    await until(async () => (await redis.hget(`${p}{ledger}:base:${U}`, 's')) === '1');
    // The dead process's hold of 30 is released; the stale base (100) still serves while the database is away.
    expect(await other.hold([U], 101)).toMatchObject({ ok: false, available: 100 });
    expect((await other.hold([U], 60)).ok).toBe(true);
    reachable = true;
    db.debit(20);
    // Back: the next hold reads the base again (80), less the 60 held.
    await until(async () => {
      const probe = await other.hold([U], 1);
      if (probe.ok) await other.settle(probe.hold, 0);
      return (await redis.hget(`${p}{ledger}:base:${U}`, 's')) === null;
    });
    expect((await other.hold([U], 21)).ok).toBe(false);
    expect((await other.hold([U], 20)).ok).toBe(true);
    expect(await redis.hget(`${p}{ledger}:base:${U}`, 's')).toBeNull();
  });

  describe('quota windows', () => {
    const window: WindowClaim = {
      key: 't:7|quota:day',
      slot: 1_795_824_000,
      step: 0,
      slots: 1,
      limit: 150,
      unit: 'quota',
    };

    it('admits concurrent holds on two processes only while the one window covers them', async () => {
      const db = windowDatabase({ [U]: 1_000_000 });
      const p = prefix();
      const a = await process(db, p);
      const b = await process(db, p);
      const results = await Promise.all(
        Array.from({ length: 300 }, (_, i) => (i % 2 === 0 ? a : b).ledger.hold([U], 1, [window])),
      );
      expect(results.filter((r) => r.ok)).toHaveLength(150);
      for (const refused of results.filter((r) => !r.ok))
        expect(refused).toMatchObject({ account: heldOn(window), window: { available: 0 } });
    });

    it('gives back the window holds of a process that stopped answering once its lease runs out', async () => {
      const db = windowDatabase({ [U]: 1_000_000 });
      const p = prefix();
      const dying = await process(db, p, { leaseMs: 400, renewMs: 100 });
      expect((await dying.ledger.hold([U], 100, [window])).ok).toBe(true);
      const other = await process(db, p, { leaseMs: 400, renewMs: 100 });
      expect(await other.ledger.hold([U], 51, [window])).toMatchObject({
        ok: false,
        window: { available: 50 },
      });
      dying.redis.disconnect();
      const started = Date.now();
      await until(async () => (await other.ledger.hold([U], 51, [window])).ok);
      expect(Date.now() - started).toBeLessThan(3_000);
    });

    it("admits each relay its share of a window's last known room while Redis is down, refusing as degraded past it", async () => {
      const db = windowDatabase({ [U]: 1_000_000 });
      const p = prefix();
      const a = await process(db, p);
      const b = await process(db, p);
      await until(() => a.ledger.liveProcesses() === 2 && b.ledger.liveProcesses() === 2);
      const day = { ...window, limit: 1000 };
      const first = await a.ledger.hold([U], 10, [day]);
      if (!first.ok) throw new Error('admitted');
      await a.ledger.settle(first.hold, 10);

      await server.stop();
      try {
        const fromA: HoldResult[] = [];
        const fromB: HoldResult[] = [];
        for (let i = 0; i < 60; i += 1) {
          fromA.push(await a.ledger.hold([U], 10, [day]));
          fromB.push(await b.ledger.hold([U], 10, [day]));
        }
        // a last saw 990 left in the window, b reads the database's 1000 less nothing owed: half of each.
        expect(fromA.filter((r) => r.ok)).toHaveLength(49);
        expect(fromB.filter((r) => r.ok)).toHaveLength(50);
        for (const refused of [...fromA, ...fromB].filter((r) => !r.ok))
          expect(refused).toMatchObject({ account: heldOn(day), degraded: true });
        // Settled while degraded: the charges are in the window's slot, for the writer.
        const settled = fromA.find((r) => r.ok);
        if (!settled?.ok) throw new Error('admitted');
        expect(await a.ledger.settle(settled.hold, 7)).toMatchObject({
          charged: 7,
          windows: [[heldOn(day), 7]],
        });
      } finally {
        await server.start();
      }
      await until(() => !a.ledger.isDegraded() && !b.ledger.isDegraded());
    });

    // Each case's database has its own key prefix: a second ledger opened on it is a second process sharing it.
    const prefixes = new WeakMap<WindowDatabase, string>();
    windowLedgerCases(async (db) => {
      let p = prefixes.get(db);
      if (p === undefined) {
        p = prefix();
        prefixes.set(db, p);
      }
      return (await process(db, p)).ledger;
    });
  });
});
