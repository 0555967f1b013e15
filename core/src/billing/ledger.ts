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
 * Two stores implement it: memory (one process, no Redis) and Redis (every relay process shares one ledger,
 * `redis-ledger.ts`).
 */
import { and, eq, inArray, isNull } from 'drizzle-orm';
import type { Db } from '../db/client.ts';
import { tokens } from '../db/schema/tokens.ts';
import { users } from '../db/schema/users.ts';

/** A user's quota (`u:<id>`) or a limited token's remaining quota (`t:<id>`). */
export type Account = `u:${number}` | `t:${number}`;

export const userAccount = (id: number): Account => `u:${id}`;
export const tokenAccount = (id: number): Account => `t:${id}`;

/** A balance as the database holds it, with the `ledger_version` of the row it was read from. */
export interface AccountBase {
  readonly balance: number;
  readonly version: number;
}

/** Reads the bases of these accounts from the database; an account without a row is absent. */
export type BaseLoader = (accounts: readonly Account[]) => Promise<Map<Account, AccountBase>>;

/** An estimate held against one or two accounts until the request settles. */
export interface Hold {
  readonly accounts: readonly Account[];
  readonly amount: number;
  /** Admitted on this process's own view while the shared store was unreachable. */
  readonly degraded: boolean;
  settled: boolean;
}

export type HoldResult =
  | { readonly ok: true; readonly hold: Hold }
  /**
   * The account that could not cover the amount, and what it had. `degraded` marks a refusal made on this
   * process's own share of the balance while the shared store was unreachable: the payer may well have the money,
   * so it is answered as the gateway's trouble (503 with Retry-After), never as an empty balance.
   */
  | {
      readonly ok: false;
      readonly account: Account;
      readonly available: number;
      readonly degraded?: boolean;
    };

export interface SettleResult {
  /** Quota taken: the bill, or less when the balance could not cover a bill larger than the hold. */
  readonly charged: number;
  /** Part of the bill no balance covered. */
  readonly shortfall: number;
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
  /** Holds `amount` on every account when each can cover it; otherwise nothing is held. */
  hold(accounts: readonly Account[], amount: number): Promise<HoldResult>;
  /**
   * Turns a hold into a charge (0 releases it). A bill up to the hold is charged as is; a larger one is charged
   * as far as the balances go (never less than the hold). Idempotent: a settled hold settles to nothing.
   */
  settle(hold: Hold, charge: number): Promise<SettleResult>;
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

/** Reads users' quota and limited tokens' remaining quota with their ledger versions, one query per kind. */
export function createBaseLoader(db: Db): BaseLoader {
  return async (accounts) => {
    const userIds: number[] = [];
    const tokenIds: number[] = [];
    for (const account of accounts) (account[0] === 'u' ? userIds : tokenIds).push(Number(account.slice(2)));
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
    return found;
  };
}

/** The charge of a settled hold: the bill up to the hold, beyond it as far as `available` goes. */
export function chargeOf(hold: number, bill: number, availableAfterRelease: number): SettleResult {
  if (bill <= hold) return { charged: bill, shortfall: 0 };
  const charged = Math.max(hold, Math.min(bill, availableAfterRelease));
  return { charged, shortfall: bill - charged };
}

const refusedFor = (account: Account, available: number): HoldResult => ({ ok: false, account, available });

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

  return {
    async hold(accounts, amount) {
      if (accounts.some((account) => !bases.has(account))) {
        // A balance not read yet while the database is away: the gateway's trouble, not an empty balance.
        const read = await ensureBases(accounts).then(
          () => true,
          () => false,
        );
        if (!read) return { ok: false, account: accounts[0] as Account, available: 0, degraded: true };
      }
      for (const account of accounts) {
        const available = availableOf(account) ?? 0;
        if (available < amount || available <= 0) return refusedFor(account, Math.max(available, 0));
      }
      for (const account of accounts) addOut(account, amount);
      return { ok: true, hold: { accounts, amount, degraded: false, settled: false } };
    },
    async settle(hold, bill) {
      if (hold.settled) return { charged: 0, shortfall: 0 };
      hold.settled = true;
      // Without the database the bases known here bound a bill over the hold (at worst, to the hold).
      if (bill > hold.amount) await ensureBases(hold.accounts).catch(() => undefined);
      let room = Number.POSITIVE_INFINITY;
      for (const account of hold.accounts) {
        addOut(account, -hold.amount);
        room = Math.min(room, availableOf(account) ?? hold.amount);
      }
      const result = chargeOf(hold.amount, bill, room);
      for (const account of hold.accounts) addOut(account, result.charged);
      return result;
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
