/**
 * What a ledger (memory or Redis) must do with quota windows (docs/adr/0043), as cases both ledger test files run:
 * a window admits up to its limit beside the balances, counts requests one per call, settles (a refund included)
 * in the slot it was held in, keeps what was spent when the limit changes, sums a rolling window's buckets and says
 * when enough of them leave, bounds a bill over its hold, and reports which of a balance and a window refused.
 * The figures are chosen by hand and written as literals.
 */
import { expect, it } from 'vitest';
import {
  type Account,
  type AccountBase,
  type BaseLoader,
  isWindowAccount,
  type Ledger,
  tokenAccount,
  userAccount,
  type WindowAccount,
  type WindowClaim,
  type WrittenDebit,
} from '../billing/ledger.ts';

/**
 * Balances and window slots as the database holds them, with versions: a user's `quota` and `ledger_version`, a
 * slot's `quota_window_usage` row (no row: nothing spent, version 0). `commit` is what the batching writer does.
 */
export function windowDatabase(
  balances: Readonly<Record<string, number>>,
  spent: Readonly<Record<string, number>> = {},
) {
  const rows = new Map<Account, AccountBase>();
  for (const [account, balance] of Object.entries(balances))
    rows.set(account as Account, { balance, version: 0 });
  for (const [account, amount] of Object.entries(spent))
    rows.set(account as Account, { balance: -amount, version: 1 });
  const loadBases: BaseLoader = async (accounts) => {
    const found = new Map<Account, AccountBase>();
    for (const account of accounts) {
      const row = rows.get(account) ?? (isWindowAccount(account) ? { balance: 0, version: 0 } : undefined);
      if (row) found.set(account, { ...row });
    }
    return found;
  };
  return {
    loadBases,
    /** The writer commits a charge (a debit, or a window slot's `amount += charge`): the debit to report. */
    commit(account: Account, amount: number): WrittenDebit {
      const row = rows.get(account) ?? { balance: 0, version: 0 };
      const next = { balance: row.balance - amount, version: row.version + 1 };
      rows.set(account, next);
      return { account, amount, version: next.version };
    },
  };
}

export type WindowDatabase = ReturnType<typeof windowDatabase>;

/** Saturday 2026-11-28 00:00 UTC and the day after. */
const DAY_1 = 1_795_824_000;
const DAY_2 = DAY_1 + 86_400;

const U = userAccount(1);
const T = tokenAccount(7);

const daily = (limit: number, unit: 'quota' | 'requests' = 'quota', slot = DAY_1): WindowClaim => ({
  key: `t:7|${unit}:day`,
  slot,
  step: 0,
  slots: 1,
  limit,
  unit,
});

/** A 5-hour window: 60 buckets of 300 s; `slot` is the bucket of now. */
const fiveHours = (limit: number, slot: number): WindowClaim => ({
  key: 'u:1|quota:5h',
  slot,
  step: 300,
  slots: 60,
  limit,
  unit: 'quota',
});

const slotOf = (claim: WindowClaim, k = 0): WindowAccount =>
  `w:${claim.key}@${claim.slot - k * claim.step}` as WindowAccount;

/**
 * Registers the cases. `open` gives a ledger on `db`: called twice in one case, it is a second process where the
 * store is shared (Redis) and a fresh one otherwise.
 */
export function windowLedgerCases(open: (db: WindowDatabase) => Promise<Ledger>): void {
  it('admits holds while a daily window has room, whatever the balance, and says when the window refuses', async () => {
    const ledger = await open(windowDatabase({ [U]: 1_000_000 }));
    const window = daily(100);
    for (let i = 0; i < 3; i += 1) expect((await ledger.hold([U], 30, [window])).ok).toBe(true);
    expect(await ledger.hold([U], 30, [window])).toEqual({
      ok: false,
      account: slotOf(window),
      available: 10,
      window: { claim: window, available: 10 },
    });
    expect((await ledger.hold([U], 10, [window])).ok).toBe(true);
  });

  it('counts a requests window one per call: a refund gives the request back, a served call keeps it', async () => {
    const ledger = await open(windowDatabase({ [U]: 1_000_000 }));
    const window = daily(2, 'requests');
    const first = await ledger.hold([U], 500, [window]);
    const second = await ledger.hold([U], 500, [window]);
    if (!first.ok || !second.ok) throw new Error('two requests fit in a window of 2');
    expect(await ledger.hold([U], 500, [window])).toMatchObject({ ok: false, window: { available: 0 } });
    // Nothing produced: the request is given back.
    expect(await ledger.settle(first.hold, 0, false)).toEqual({ charged: 0, shortfall: 0, windows: [] });
    const third = await ledger.hold([U], 500, [window]);
    expect(third.ok).toBe(true);
    // Served for 300: the request stays counted, and is what the writer writes to the slot.
    expect(await ledger.settle(second.hold, 300, true)).toEqual({
      charged: 300,
      shortfall: 0,
      windows: [[slotOf(window), 1]],
    });
    expect((await ledger.hold([U], 500, [window])).ok).toBe(false);
  });

  it('settles a call in the slot it was held in, even once the day has turned, and the new day starts full', async () => {
    const ledger = await open(windowDatabase({ [U]: 1_000_000 }));
    const today = daily(100);
    const held = await ledger.hold([U], 60, [today]);
    if (!held.ok) throw new Error('admitted');
    // Past midnight the window is a new slot with all of its limit.
    const tomorrow = daily(100, 'quota', DAY_2);
    const next = await ledger.hold([U], 100, [tomorrow]);
    expect(next.ok).toBe(true);
    // The call held yesterday settles into yesterday: 40 of the 60, the 20 over coming back there.
    expect(await ledger.settle(held.hold, 40)).toEqual({
      charged: 40,
      shortfall: 0,
      windows: [[slotOf(today), 40]],
    });
    expect(await ledger.hold([U], 1, [tomorrow])).toMatchObject({ ok: false, window: { available: 0 } });
    expect(await ledger.hold([U], 61, [today])).toMatchObject({ ok: false, window: { available: 60 } });
    expect((await ledger.hold([U], 60, [today])).ok).toBe(true);
  });

  it('keeps what a window spent when its limit changes: the next call is checked against the new limit', async () => {
    const window = daily(100);
    const db = windowDatabase({ [U]: 1_000_000 }, { [slotOf(window)]: 80 });
    const ledger = await open(db);
    expect(await ledger.hold([U], 30, [window])).toMatchObject({ ok: false, window: { available: 20 } });
    expect((await ledger.hold([U], 30, [{ ...window, limit: 200 }])).ok).toBe(true);
    expect(await ledger.hold([U], 91, [{ ...window, limit: 200 }])).toMatchObject({
      ok: false,
      window: { available: 90 },
    });
  });

  it('sums the buckets of a rolling window and tells when its oldest leave enough room', async () => {
    const now = DAY_1 + 36_000; // 10:00 UTC, a bucket boundary
    const window = fiveHours(100, now);
    // 40 spent in the oldest bucket counted (05:05), 50 in the one of 09:10.
    const db = windowDatabase({ [U]: 1_000_000 }, { [slotOf(window, 59)]: 40, [slotOf(window, 10)]: 50 });
    const ledger = await open(db);
    // 10 left; 20 fit once the 05:05 bucket leaves, at 10:05 (05:05 + 5 h).
    expect(await ledger.hold([U], 20, [window])).toEqual({
      ok: false,
      account: slotOf(window),
      available: 10,
      window: { claim: window, available: 10, freeAt: DAY_1 + 36_300 },
    });
    // 60 fit only once the 09:10 bucket leaves too, at 14:10.
    expect(await ledger.hold([U], 60, [window])).toMatchObject({
      window: { freeAt: DAY_1 + 51_000 },
    });
    // At 10:05 the 40 have left: 50 left.
    const later = fiveHours(100, now + 300);
    expect((await ledger.hold([U], 50, [later])).ok).toBe(true);
    expect(await ledger.hold([U], 1, [later])).toMatchObject({ ok: false, window: { available: 0 } });
  });

  it('charges a bill over its hold only as far as the window goes', async () => {
    const ledger = await open(windowDatabase({ [U]: 1_000_000 }));
    const window = daily(100);
    const first = await ledger.hold([U], 50, [window]);
    const other = await ledger.hold([U], 30, [window]);
    if (!first.ok || !other.ok) throw new Error('admitted');
    expect(await ledger.settle(first.hold, 80)).toEqual({
      charged: 70,
      shortfall: 10,
      windows: [[slotOf(window), 70]],
    });
  });

  it('moves a written window charge from outstanding into the base once, and another process reads it from the database', async () => {
    const db = windowDatabase({ [U]: 1_000_000 });
    const ledger = await open(db);
    const window = daily(100);
    const held = await ledger.hold([U], 30, [window]);
    if (!held.ok) throw new Error('admitted');
    const settled = await ledger.settle(held.hold, 30);
    ledger.written([db.commit(U, 30), db.commit(slotOf(window), 30)]);
    expect(settled.windows).toEqual([[slotOf(window), 30]]);
    expect(await ledger.hold([U], 71, [window])).toMatchObject({ ok: false, window: { available: 70 } });
    const other = await open(db);
    expect(await other.hold([U], 71, [window])).toMatchObject({ ok: false, window: { available: 70 } });
    expect((await other.hold([U], 70, [window])).ok).toBe(true);
  });

  it('names the balance when the balance and a window are both short, with the window beside it', async () => {
    const window = daily(100);
    const ledger = await open(windowDatabase({ [U]: 10, [T]: 1_000 }, { [slotOf(window)]: 95 }));
    expect(await ledger.hold([U, T], 20, [window])).toEqual({
      ok: false,
      account: U,
      available: 10,
      window: { claim: window, available: 5 },
    });
    // The balance alone short: no window in the refusal.
    expect(await ledger.hold([U, T], 11, [{ ...window, limit: 1_000 }])).toEqual({
      ok: false,
      account: U,
      available: 10,
    });
  });
}
