import { describe, expect, it } from 'vitest';
import { windowLedgerCases } from '../testing/window-ledger-cases.ts';
import {
  type Account,
  type AccountBase,
  type BaseLoader,
  chargeOf,
  createMemoryLedger,
  tokenAccount,
  userAccount,
} from './ledger.ts';

/** A database of balances with `ledger_version`s, as the writer and the console change them. */
function fakeDatabase(balances: Record<Account, number>) {
  const rows = new Map<Account, AccountBase>(
    Object.entries(balances).map(([account, balance]) => [account as Account, { balance, version: 0 }]),
  );
  let reads = 0;
  const loadBases: BaseLoader = async (accounts) => {
    reads += 1;
    const found = new Map<Account, AccountBase>();
    for (const account of accounts) {
      const row = rows.get(account);
      if (row) found.set(account, { ...row });
    }
    return found;
  };
  return {
    loadBases,
    reads: () => reads,
    /** What the writer's flush does: debit and bump the version; returns the version the row got. */
    debit(account: Account, amount: number): number {
      const row = rows.get(account) as AccountBase;
      const next = { balance: row.balance - amount, version: row.version + 1 };
      rows.set(account, next);
      return next.version;
    },
    balance: (account: Account) => rows.get(account)?.balance,
  };
}

const U = userAccount(1);
const T = tokenAccount(7);

describe('memory ledger', () => {
  it('refuses as degraded, not as an empty balance, when a balance cannot be read, and still settles what it held', async () => {
    const db = fakeDatabase({ [U]: 100 });
    let reachable = true;
    const ledger = createMemoryLedger({
      loadBases: (accounts) =>
        reachable ? db.loadBases(accounts) : Promise.reject(new Error('ECONNREFUSED')),
    });
    const held = await ledger.hold([U], 30);
    if (!held.ok) throw new Error('admitted');
    reachable = false;
    expect(await ledger.hold([T], 10)).toEqual({ ok: false, account: T, available: 0, degraded: true });
    // A known balance keeps serving; a bill over the hold is bounded by what is known.
    expect((await ledger.hold([U], 30)).ok).toBe(true);
    expect(await ledger.settle(held.hold, 50)).toEqual({ charged: 50, shortfall: 0 });
    expect(ledger.available(U)).toBe(20);
  });

  it('admits concurrent requests only while the balance covers their estimates', async () => {
    const db = fakeDatabase({ [U]: 150 });
    const ledger = createMemoryLedger({ loadBases: db.loadBases });
    const results = await Promise.all(Array.from({ length: 300 }, () => ledger.hold([U], 1)));
    expect(results.filter((r) => r.ok)).toHaveLength(150);
    const refused = results.find((r) => !r.ok);
    expect(refused).toEqual({ ok: false, account: U, available: 0 });
    // The base was read once, not once per request.
    expect(db.reads()).toBe(1);
  });

  it('holds against the user and a limited token together, and refuses on whichever cannot cover it', async () => {
    const db = fakeDatabase({ [U]: 1000, [T]: 30 });
    const ledger = createMemoryLedger({ loadBases: db.loadBases });
    const first = await ledger.hold([U, T], 20);
    expect(first.ok).toBe(true);
    expect(await ledger.hold([U, T], 20)).toEqual({ ok: false, account: T, available: 10 });
    expect(ledger.available(U)).toBe(980);
  });

  it('releases a hold settled at 0, charges a bill within the hold as is, and caps a larger bill by the balance', async () => {
    const db = fakeDatabase({ [U]: 100 });
    const ledger = createMemoryLedger({ loadBases: db.loadBases });
    const a = await ledger.hold([U], 40);
    const b = await ledger.hold([U], 40);
    if (!a.ok || !b.ok) throw new Error('both should be admitted');
    expect(await ledger.settle(a.hold, 0)).toEqual({ charged: 0, shortfall: 0 });
    expect(ledger.available(U)).toBe(60);
    expect(await ledger.settle(b.hold, 500)).toEqual({ charged: 100, shortfall: 400 });
    expect(ledger.available(U)).toBe(0);
    // Settling twice changes nothing.
    expect(await ledger.settle(b.hold, 500)).toEqual({ charged: 0, shortfall: 0 });
    expect(ledger.available(U)).toBe(0);
  });

  it('moves written debits from outstanding into the base exactly once, whatever the order of reads and writes', async () => {
    const db = fakeDatabase({ [U]: 100 });
    const ledger = createMemoryLedger({ loadBases: db.loadBases });
    const held = await ledger.hold([U], 10);
    if (!held.ok) throw new Error('admitted');
    await ledger.settle(held.hold, 10);
    expect(ledger.available(U)).toBe(90);
    // The writer commits, then reports: the base read before the commit is lowered by the debit.
    const version = db.debit(U, 10);
    ledger.written([{ account: U, amount: 10, version }]);
    expect(ledger.available(U)).toBe(90);
    // The console changes the balance; the base is read again (at the new version), nothing counted twice.
    ledger.invalidate([U]);
    const again = await ledger.hold([U], 5);
    expect(again.ok).toBe(true);
    expect(ledger.available(U)).toBe(85);
    expect(db.balance(U)).toBe(90);
  });

  it('reads a base again when the read raced with a commit already reported', async () => {
    const db = fakeDatabase({ [U]: 100 });
    let gate: Promise<void> | undefined;
    let release: () => void = () => {};
    const ledger = createMemoryLedger({
      loadBases: async (accounts) => {
        const read = await db.loadBases(accounts);
        await gate; // a read can land after a commit that happened while it travelled
        return read;
      },
    });
    const charged = await ledger.hold([U], 30);
    if (!charged.ok) throw new Error('admitted');
    await ledger.settle(charged.hold, 30);
    // The console changed the user: the base is read again, and that read (version 0) is slow...
    ledger.invalidate([U]);
    gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const pending = ledger.hold([U], 1);
    // ...while the writer commits the 30 (version 1) and reports it.
    ledger.written([{ account: U, amount: 30, version: db.debit(U, 30) }]);
    release();
    gate = undefined;
    expect((await pending).ok).toBe(true);
    // The stale read was refused and read again: 70 in the database, 1 held, the 30 counted once.
    expect(ledger.available(U)).toBe(69);
  });

  it('refuses an account with no row', async () => {
    const ledger = createMemoryLedger({ loadBases: fakeDatabase({}).loadBases });
    expect(await ledger.hold([U], 1)).toEqual({ ok: false, account: U, available: 0 });
  });
});

describe('memory ledger: quota windows', () => {
  windowLedgerCases(async (db) => createMemoryLedger({ loadBases: db.loadBases }));
});

describe('chargeOf', () => {
  it.each([
    ['a bill within the hold is charged as is', 500, 300, 0, { charged: 300, shortfall: 0 }],
    ['a larger bill takes what the balance still has', 500, 800, 1000, { charged: 800, shortfall: 0 }],
    ['never more than the balance', 500, 2000, 1500, { charged: 1500, shortfall: 500 }],
    ['never less than the hold it was admitted for', 500, 900, 200, { charged: 500, shortfall: 400 }],
    ['nothing produced releases everything', 500, 0, 1000, { charged: 0, shortfall: 0 }],
  ])('%s', (_name, hold, bill, room, expected) => {
    expect(chargeOf(hold, bill, room)).toEqual(expected);
  });
});
