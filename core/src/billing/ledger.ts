/**
 * The ledger of balances the relay admits requests against (docs/adr/0016). The database holds each payer's
 * settled balance (`users.quota`, a limited token's `remain_quota`); the ledger adds what the database does not
 * hold yet: the estimates of requests in flight (holds) and the charges settled but not written (the batching
 * writer's). A request is admitted only when every account it draws on has `balance − outstanding ≥ estimate`,
 * and the check and the hold are one step, so concurrent requests can never together spend more than the balance.
 *
 * Each account keeps:
 * - a **base**: the database balance and the `ledger_version` it was read at, loaded on first use and again after
 *   a change event (`users.changed`, `tokens.changed`);
 * - **outstanding**: holds plus settled-but-unwritten charges;
 * - the highest **version** the writer has reported. The writer bumps `ledger_version` with every debit it
 *   commits; when it reports the commit, the base is lowered only if it was read before that commit (its version
 *   is lower), and a base read before a commit that was already reported is refused and read again. So a base is
 *   never ahead of or behind the debits, whatever the order of reads and writes.
 *
 * **Quota windows** (docs/adr/0043) are accounts too: each slot of a window (a calendar period, or a rolling window's
 * bucket) is an account `w:<windowKey>@<slotStart>` whose base is minus what `quota_window_usage` holds for it (with
 * that row's version), so the same holds, outstanding amounts, reports and reaps apply to it. The window's limit is
 * not in the ledger: each hold brings it ({@link WindowClaim}), so a changed limit applies to the next call and what
 * was spent stays. A window can cover an amount while `limit + Σ base − Σ outstanding ≥ amount` over the slots it
 * counts (one for a calendar window, 60 buckets for a rolling one), and the amount is held on the slot of now, where
 * its settlement (a refund included) goes back, even after the window moved on.
 *
 * Two stores implement it: memory (one process, no Redis) and Redis (every relay process shares one ledger,
 * `redis-ledger.ts`).
 */
import { and, eq, inArray, isNull } from 'drizzle-orm';
import type { Db, Executor } from '../db/client.ts';
import { quotaWindowUsage } from '../db/schema/quota-window-usage.ts';
import { tokens } from '../db/schema/tokens.ts';
import { users } from '../db/schema/users.ts';
import type { QuotaWindowUnit } from './quota-windows.ts';

/** One slot of a quota window: `w:<windowKey>@<slotStart>` (docs/adr/0043). */
export type WindowAccount = `w:${string}`;

/** A user's quota (`u:<id>`), a limited token's remaining quota (`t:<id>`), or a quota window's slot. */
export type Account = `u:${number}` | `t:${number}` | WindowAccount;

export const userAccount = (id: number): Account => `u:${id}`;
export const tokenAccount = (id: number): Account => `t:${id}`;
export const windowAccount = (key: string, slot: number): WindowAccount => `w:${key}@${slot}`;
export const isWindowAccount = (account: Account): account is WindowAccount => account.startsWith('w:');

/** The window key and slot of a window account (a group name may hold `@`: the slot follows the last one). */
export function parseWindowAccount(account: WindowAccount): { readonly key: string; readonly slot: number } {
  const at = account.lastIndexOf('@');
  return { key: account.slice(2, at), slot: Number(account.slice(at + 1)) };
}

/**
 * A quota window as a hold checks it: which slot the call is held in, which slots the window counts, its limit and
 * what it counts. Made by the relay from the window's stored shape and its clock (`slotOf`, `countedSpan`).
 */
export interface WindowClaim {
  /** `windowKey()` of quota-windows.ts. */
  readonly key: string;
  /** Unix second the slot of now starts: the calendar period's, or the rolling window's current bucket's. */
  readonly slot: number;
  /** A rolling window's bucket length in seconds; 0 for a calendar window. */
  readonly step: number;
  /** The slots counted, ending with `slot`: 1 for a calendar window, 60 buckets for a rolling one. */
  readonly slots: number;
  readonly limit: number;
  /** `quota`: the call's estimate is held and its charge taken; `requests`: 1 per call. */
  readonly unit: QuotaWindowUnit;
}

/** The account a claim holds and charges: its slot of now. */
export const heldOn = (claim: WindowClaim): WindowAccount => windowAccount(claim.key, claim.slot);

/** The accounts a window counts, newest first. */
export function countedAccounts(claim: WindowClaim): WindowAccount[] {
  const accounts: WindowAccount[] = [];
  for (let k = 0; k < claim.slots; k += 1)
    accounts.push(windowAccount(claim.key, claim.slot - k * claim.step));
  return accounts;
}

/** What a window holds of a call whose estimate is `amount`. */
export const windowAmount = (claim: WindowClaim, amount: number): number =>
  claim.unit === 'requests' ? 1 : amount;

/** A window's charge: the quota charged, or 1 for a call that counts as a request. */
export type WindowCharge = readonly [WindowAccount, number];

/** The charges of a settled hold's windows (none of 0): the quota charged, or the request when it counts. */
export function windowChargesOf(
  windows: readonly WindowClaim[],
  charged: number,
  counted: boolean,
): WindowCharge[] {
  const charges: WindowCharge[] = [];
  for (const claim of windows) {
    const amount = claim.unit === 'requests' ? (counted ? 1 : 0) : charged;
    if (amount > 0) charges.push([heldOn(claim), amount]);
  }
  return charges;
}

/**
 * When a rolling window refused `amount` with `available` left can take it, as far as the ledger can tell: its
 * oldest buckets leave it one by one (`usedIn(k)` is what bucket k, 0 the newest, holds written and outstanding).
 * Undefined for a calendar window (it frees at its period's end) or when even an empty window could not.
 */
export function freeAtOf(
  claim: WindowClaim,
  available: number,
  amount: number,
  usedIn: (k: number) => number,
): number | undefined {
  if (claim.step === 0) return undefined;
  let freed = available;
  for (let k = claim.slots - 1; k >= 0; k -= 1) {
    freed += usedIn(k);
    // Bucket k is counted until `slots` buckets have started after it.
    if (freed >= amount && freed > 0) return claim.slot - k * claim.step + claim.slots * claim.step;
  }
  return undefined;
}

/** A balance as the database holds it, with the `ledger_version` of the row it was read from. */
export interface AccountBase {
  readonly balance: number;
  readonly version: number;
}

/** Reads the bases of these accounts from the database; an account without a row is absent. */
export type BaseLoader = (accounts: readonly Account[]) => Promise<Map<Account, AccountBase>>;

/** An estimate held against one or two accounts (and the caller's quota windows) until the request settles. */
export interface Hold {
  readonly accounts: readonly Account[];
  readonly amount: number;
  /** The quota windows the call is held in, each on its slot of the moment it was held; absent: none. */
  readonly windows?: readonly WindowClaim[] | undefined;
  /** Admitted on this process's own view while the shared store was unreachable. */
  readonly degraded: boolean;
  settled: boolean;
}

/** A quota window that could not take a call: what it had left, and when it can, as far as the ledger can tell. */
export interface WindowRefusal {
  readonly claim: WindowClaim;
  /** The window's limit less what it has spent and holds (0 when it is over). */
  readonly available: number;
  /** A rolling window: the Unix second its oldest buckets will have left it room; see {@link freeAtOf}. */
  readonly freeAt?: number | undefined;
}

export type HoldResult =
  | { readonly ok: true; readonly hold: Hold }
  /**
   * The account that could not cover the amount, and what it had. `degraded` marks a refusal made on this
   * process's own share of the balance while the shared store was unreachable: the payer may well have the money,
   * so it is answered as the gateway's trouble (503 with Retry-After), never as an empty balance. A window that
   * could not take it is in `window`: alone (then `account` is its slot), or beside a balance that could not either.
   */
  | {
      readonly ok: false;
      readonly account: Account;
      readonly available: number;
      readonly degraded?: boolean;
      readonly window?: WindowRefusal;
    };

export interface SettleResult {
  /** Quota taken: the bill, or less when the balance could not cover a bill larger than the hold. */
  readonly charged: number;
  /** Part of the bill no balance covered. */
  readonly shortfall: number;
  /** What each quota window of the hold was charged (in the slot it was held in), for the writer; none of 0. */
  readonly windows?: readonly WindowCharge[];
}

/** A debit the writer committed: the account, the amount, and the `ledger_version` the row got. */
export interface WrittenDebit {
  readonly account: Account;
  readonly amount: number;
  readonly version: number;
  /**
   * Another process wrote this debit (a journal entry both held): it leaves the outstanding amount, and the base is
   * read again at `version` or later instead of lowered.
   */
  readonly reread?: boolean;
}

/**
 * A settled write on its way to the database (docs/adr/0022): its journal's sequence number, the record as text,
 * and the charges it carries. The ledger keeps it durably beside those charges (Redis) until the writer reports it
 * written, so a process that dies before writing it leaves it to another instead of losing it.
 */
export interface JournalEntry {
  readonly seq: number;
  readonly payload: string;
  readonly charges: readonly (readonly [Account, number])[];
}

/** Writes the records of a dead process's journal to the database (idempotently, by their sequence numbers). */
export type OrphanWriter = (payloads: readonly string[]) => Promise<void>;

export interface Ledger {
  /**
   * Holds `amount` on every account and in every window (1 in a requests window) when each can cover it; otherwise
   * nothing is held. With no window the work is what it was before windows existed.
   */
  hold(accounts: readonly Account[], amount: number, windows?: readonly WindowClaim[]): Promise<HoldResult>;
  /**
   * Turns a hold into a charge (0 releases it). A bill up to the hold is charged as is; a larger one is charged
   * as far as the balances and quota windows go (never less than the hold). The windows are charged in the slots
   * they were held in: the charge in quota windows, 1 in requests windows when `counted` (the call counts as a
   * request; default: something was charged). Idempotent: a settled hold settles to nothing.
   */
  settle(hold: Hold, charge: number, counted?: boolean): Promise<SettleResult>;
  /**
   * The writer committed these debits, and every journal entry up to `journaledUpTo`: they leave the outstanding
   * amounts and enter the bases.
   */
  written(debits: readonly WrittenDebit[], journaledUpTo?: number): void;
  /** Keeps a settled write durably until it is reported written (a no-op where the store is this process). */
  journal(entry: JournalEntry): void;
  /** Where the ledger finds the entries not written yet, to journal them again after the store lost them. */
  attachJournal(unwritten: () => readonly JournalEntry[]): void;
  /**
   * Writes the journals dead processes left (their charges stay outstanding until then) through `write`, and
   * resolves with the number of entries written; 0 where there is no shared store.
   */
  drainOrphans(write: OrphanWriter): Promise<number>;
  /** Forgets the bases of accounts the console changed; the next hold reads them again. */
  invalidate(accounts: readonly Account[]): void;
  /** What an account can spend now (balance − outstanding), when its base is known here. */
  available(account: Account): number | undefined;
  /** True while the shared store is unreachable and this process admits on its own view (redis-ledger.ts). */
  isDegraded(): boolean;
  close(): Promise<void>;
}

/**
 * Reads users' quota and limited tokens' remaining quota with their ledger versions, one query per kind, and the
 * windows' slots from `quota_window_usage`: minus what the slot has spent, at its row's version (a slot nothing was
 * written to yet: 0 at version 0, so every window account has a base).
 */
export function createBaseLoader(db: Db): BaseLoader {
  return async (accounts) => {
    const userIds: number[] = [];
    const tokenIds: number[] = [];
    const slots: WindowAccount[] = [];
    for (const account of accounts) {
      if (isWindowAccount(account)) slots.push(account);
      else (account[0] === 'u' ? userIds : tokenIds).push(Number(account.slice(2)));
    }
    const found = new Map<Account, AccountBase>();
    if (userIds.length > 0) {
      const rows = await db
        .select({ id: users.id, balance: users.quota, version: users.ledgerVersion })
        .from(users)
        .where(and(inArray(users.id, userIds), isNull(users.deletedAt)));
      for (const row of rows) found.set(userAccount(row.id), { balance: row.balance, version: row.version });
    }
    if (tokenIds.length > 0) {
      const rows = await db
        .select({ id: tokens.id, balance: tokens.remainQuota, version: tokens.ledgerVersion })
        .from(tokens)
        .where(tokenIds.length === 1 ? eq(tokens.id, tokenIds[0] as number) : inArray(tokens.id, tokenIds));
      for (const row of rows) found.set(tokenAccount(row.id), { balance: row.balance, version: row.version });
    }
    if (slots.length > 0) {
      for (const account of slots) found.set(account, { balance: 0, version: 0 });
      for (const row of await readWindowSlots(db, slots))
        found.set(row.account, { balance: -row.amount, version: row.version });
    }
    return found;
  };
}

/** What `quota_window_usage` holds for these window slots (a slot without a row is absent), with its version. */
export async function readWindowSlots(
  db: Executor,
  accounts: readonly WindowAccount[],
): Promise<{ readonly account: WindowAccount; readonly amount: number; readonly version: number }[]> {
  const asked = new Set(accounts);
  const parsed = accounts.map(parseWindowAccount);
  // Keys × slots asked is a superset of the pairs (one key and its buckets, mostly): kept only where asked.
  const rows = await db
    .select({
      key: quotaWindowUsage.windowKey,
      slot: quotaWindowUsage.slotStart,
      amount: quotaWindowUsage.amount,
      version: quotaWindowUsage.version,
    })
    .from(quotaWindowUsage)
    .where(
      and(
        inArray(quotaWindowUsage.windowKey, [...new Set(parsed.map((p) => p.key))]),
        inArray(quotaWindowUsage.slotStart, [...new Set(parsed.map((p) => p.slot))]),
      ),
    );
  return rows
    .map((row) => ({ account: windowAccount(row.key, row.slot), amount: row.amount, version: row.version }))
    .filter((row) => asked.has(row.account));
}

/** A hold just taken. */
export const newHold = (
  accounts: readonly Account[],
  amount: number,
  windows: readonly WindowClaim[],
  degraded: boolean,
): Hold => ({ accounts, amount, ...(windows.length > 0 ? { windows } : {}), degraded, settled: false });

/** The charge of a settled hold: the bill up to the hold, beyond it as far as `available` goes. */
export function chargeOf(hold: number, bill: number, availableAfterRelease: number): SettleResult {
  if (bill <= hold) return { charged: bill, shortfall: 0 };
  const charged = Math.max(hold, Math.min(bill, availableAfterRelease));
  return { charged, shortfall: bill - charged };
}

/** A hold refused. */
export type HoldRefusal = Extract<HoldResult, { ok: false }>;

const refusedFor = (account: Account, available: number): HoldRefusal => ({ ok: false, account, available });

/** No quota window: the hold of most calls. */
const NO_WINDOWS: readonly WindowClaim[] = Object.freeze([]);

/** How often the memory ledger forgets the bases of window slots no hold touched since the last time. */
const SWEEP_MS = 60_000;

/**
 * The ledger of one process (no Redis): exact for every request this process serves. Several processes on one
 * database without Redis each keep their own, so each could admit up to the whole balance: the README tells
 * such installations to add Redis.
 */
export function createMemoryLedger(options: { loadBases: BaseLoader }): Ledger {
  const bases = new Map<Account, AccountBase>();
  const outstanding = new Map<Account, number>();
  const writtenVersion = new Map<Account, number>();
  const loads = new Map<Account, Promise<void>>();
  /** Window slots a hold or settlement used since the last sweep (the others are forgotten when idle). */
  const touched = new Set<WindowAccount>();
  let sweptAt = Date.now();

  const out = (account: Account) => outstanding.get(account) ?? 0;
  const addOut = (account: Account, amount: number) => {
    const next = out(account) + amount;
    if (next === 0) outstanding.delete(account);
    else outstanding.set(account, next);
  };

  /** Reads missing bases; a base read before a debit the writer has already reported is read again. */
  async function ensureBases(accounts: readonly Account[]): Promise<void> {
    for (let attempt = 0; attempt < 5; attempt += 1) {
      const missing = accounts.filter((account) => !bases.has(account));
      if (missing.length === 0) return;
      const running = missing.map((account) => loads.get(account)).filter((p) => p !== undefined);
      if (running.length > 0) {
        await Promise.all(running);
        continue;
      }
      const load = options.loadBases(missing).then((found) => {
        for (const account of missing) {
          const base = found.get(account);
          if (base && base.version >= (writtenVersion.get(account) ?? 0)) bases.set(account, base);
        }
      });
      const shared = load.finally(() => {
        for (const account of missing) loads.delete(account);
      });
      for (const account of missing) loads.set(account, shared);
      await shared;
      // An account with no row stays missing: the hold below refuses it.
      if (missing.every((account) => bases.has(account) || !writtenVersion.has(account))) return;
    }
  }

  const availableOf = (account: Account): number | undefined => {
    const base = bases.get(account);
    return base === undefined ? undefined : base.balance - out(account);
  };

  /** A window's limit less what its counted slots spent and hold; undefined while a slot's base is unknown. */
  const windowAvailable = (claim: WindowClaim): number | undefined => {
    let sum = claim.limit;
    for (const account of countedAccounts(claim)) {
      const available = availableOf(account);
      if (available === undefined) return undefined;
      sum += available;
    }
    return sum;
  };

  /** The first window that cannot take its part of `amount`, if any. */
  function refusingWindow(windows: readonly WindowClaim[], amount: number): WindowRefusal | undefined {
    for (const claim of windows) {
      const need = windowAmount(claim, amount);
      const available = windowAvailable(claim) ?? 0;
      if (available >= need && available > 0) continue;
      const usedIn = (k: number) =>
        -(availableOf(windowAccount(claim.key, claim.slot - k * claim.step)) ?? 0);
      return { claim, available: Math.max(available, 0), freeAt: freeAtOf(claim, available, need, usedIn) };
    }
    return undefined;
  }

  /** Forgets the bases of window slots no call used for a while (their periods and buckets are behind). */
  function sweep(): void {
    const now = Date.now();
    if (now - sweptAt < SWEEP_MS) return;
    sweptAt = now;
    for (const account of [...bases.keys(), ...writtenVersion.keys()]) {
      if (!isWindowAccount(account) || touched.has(account) || out(account) !== 0 || loads.has(account))
        continue;
      bases.delete(account);
      writtenVersion.delete(account);
    }
    touched.clear();
  }

  return {
    async hold(accounts, amount, windows = NO_WINDOWS) {
      const needed =
        windows.length === 0
          ? accounts
          : [...accounts, ...windows.flatMap((claim) => countedAccounts(claim))];
      if (windows.length > 0) {
        sweep();
        for (const account of needed) if (isWindowAccount(account)) touched.add(account);
      }
      if (needed.some((account) => !bases.has(account))) {
        // A balance not read yet while the database is away: the gateway's trouble, not an empty balance.
        const read = await ensureBases(needed).then(
          () => true,
          () => false,
        );
        if (!read) return { ok: false, account: accounts[0] as Account, available: 0, degraded: true };
      }
      let refused: HoldRefusal | undefined;
      for (const account of accounts) {
        const available = availableOf(account) ?? 0;
        if (available < amount || available <= 0) {
          refused = refusedFor(account, Math.max(available, 0));
          break;
        }
      }
      const window = windows.length === 0 ? undefined : refusingWindow(windows, amount);
      if (refused) return window ? { ...refused, window } : refused;
      if (window) return { ok: false, account: heldOn(window.claim), available: window.available, window };
      for (const account of accounts) addOut(account, amount);
      for (const claim of windows) addOut(heldOn(claim), windowAmount(claim, amount));
      return { ok: true, hold: newHold(accounts, amount, windows, false) };
    },
    async settle(hold, bill, counted = bill > 0) {
      if (hold.settled) return { charged: 0, shortfall: 0 };
      hold.settled = true;
      const windows = hold.windows ?? NO_WINDOWS;
      // Without the database the bases known here bound a bill over the hold (at worst, to the hold).
      if (bill > hold.amount)
        await ensureBases([
          ...hold.accounts,
          ...windows.filter((claim) => claim.unit === 'quota').flatMap((claim) => countedAccounts(claim)),
        ]).catch(() => undefined);
      let room = Number.POSITIVE_INFINITY;
      for (const account of hold.accounts) {
        addOut(account, -hold.amount);
        room = Math.min(room, availableOf(account) ?? hold.amount);
      }
      for (const claim of windows) {
        addOut(heldOn(claim), -windowAmount(claim, hold.amount));
        touched.add(heldOn(claim));
        if (claim.unit === 'quota') room = Math.min(room, windowAvailable(claim) ?? hold.amount);
      }
      const result = chargeOf(hold.amount, bill, room);
      for (const account of hold.accounts) addOut(account, result.charged);
      if (windows.length === 0) return result;
      const charges = windowChargesOf(windows, result.charged, counted);
      for (const [account, amount] of charges) addOut(account, amount);
      return { ...result, windows: charges };
    },
    written(debits) {
      for (const { account, amount, version, reread } of debits) {
        addOut(account, -amount);
        if (reread) bases.delete(account);
        const base = bases.get(account);
        // The base keeps the version it was read at: reports of other processes' commits can come in any order.
        if (base && base.version < version)
          bases.set(account, { balance: base.balance - amount, version: base.version });
        if (version > (writtenVersion.get(account) ?? 0)) writtenVersion.set(account, version);
      }
    },
    invalidate(accounts) {
      for (const account of accounts) bases.delete(account);
    },
    // One process: its journal is the writer's local spool, replayed at start before any base is read.
    journal() {},
    attachJournal() {},
    drainOrphans: async () => 0,
    available: availableOf,
    isDegraded: () => false,
    async close() {},
  };
}
