/**
 * The batching writer (STYLE "Hot path"; docs/adr/0016, 0022, 0030): settled calls are queued in memory and written
 * in one transaction (write-records.ts) as soon as the writer is idle, so at low load a call's log and balance
 * change are in the database within milliseconds; a record that arrives while a flush is in flight waits for it,
 * and the next flush starts no sooner than `spacingMs` after the previous one began, so under load the records of
 * that time coalesce into one transaction (batches stay batches: at most 1000 / `spacingMs` transactions a second).
 * A flush that fails is retried every `intervalMs`; everything left is written on close.
 *
 * Before a call is queued it is made durable beyond this process: in the ledger's journal (Redis: the record and its
 * charges together, so a relay that dies leaves them to another, which writes them and only then lets the charges out
 * of the outstanding amounts), or in the local spool when there is no Redis (settlement-spool.ts). Each record has this
 * process's journal id and a sequence number, and the database keeps how far each journal was written, so a record
 * replayed after a crash is written exactly once.
 *
 * While the database is away a flush fails and keeps its records for the next one (an error reported, never a rejection
 * left unhandled), the relay keeps serving, and the queue grows up to `maxQueued` records: past that the relay admits
 * no more paid calls (`isFull`, a 503 with Retry-After) rather than serve calls it could lose. The dashboard's hourly
 * counters are written with the logs of the same records, so they can be lost no more than the logs.
 */
import { randomBytes } from 'node:crypto';
import {
  type Account,
  type JournalEntry,
  tokenAccount,
  userAccount,
  type WrittenDebit,
} from '@turnpike/core/billing/ledger';
import type { Db } from '@turnpike/core/db/client';
import type { BalanceChange } from '@turnpike/core/notify/notifier';
import type { SettlementSpool } from './settlement-spool.ts';
import {
  pruneWindowSlots,
  type SettlementRecord,
  type UsageWrite,
  WINDOW_SLOTS_KEPT_SECONDS,
  writeRecords,
} from './write-records.ts';

export type { UsageWrite } from './write-records.ts';

/** The most records one transaction writes. */
const BATCH_RECORDS = 5_000;

/**
 * The least time between the starts of two flushes the writer starts on its own: under load a record waits at most
 * this and one flush (a call's log and balance change are in the database within 100 ms), and a flush costs the
 * database ~3 ms before its first row (docs/adr/0052), so fewer, larger flushes are most of what a call costs it.
 */
const SPACING_MS = 75;

/** How often the writer removes quota window slots no window counts any more (docs/adr/0043). */
const PRUNE_EVERY_MS = 3_600_000;

/** Where queued records are kept durably until written: the ledger's journal, and/or a local spool. */
export interface SettlementDurability {
  journal(entry: JournalEntry): void;
  /** Hands the ledger the entries not written yet, for journaling again after Redis lost them. */
  attach(unwritten: () => readonly JournalEntry[]): void;
  readonly spool?: SettlementSpool | undefined;
}

/** A journal id for one run of one process: unique, and sortable by when it started. */
export const newJournalId = (): string => `${Date.now().toString(36)}-${randomBytes(6).toString('hex')}`;

export interface BatchWriter {
  add(write: UsageWrite): void;
  /** Writes everything queued now. */
  flush(): Promise<void>;
  /** Consume logs waiting to be written (a gauge of `/metrics`). */
  queuedLogs(): number;
  /** Records waiting to be written, how many may, and the age in seconds of the oldest (gauges of `/metrics`). */
  backlog(): { readonly records: number; readonly capacity: number; readonly oldestSeconds: number };
  /**
   * True when the queue holds `maxQueued` records, or when the spool's disk refused the last record (a full disk):
   * no more paid calls are admitted until the queue drains or the disk has room again (checked once a second).
   */
  isFull(): boolean;
  /** This process's journal id. */
  readonly journal: string;
  /** Stops the timer and writes what is left (what cannot be written stays in the journal or spool). */
  close(): Promise<void>;
}

export function createBatchWriter(options: {
  db: Db;
  /** How often a flush is tried while the last one failed (and, with `flushWhenIdle` off, the only schedule). */
  intervalMs: number;
  /**
   * Flush as soon as records are queued and no flush is in flight (default on). Off, records wait for the
   * interval, `flush()` or `close()`: for a test that needs records left unwritten, as if the process died.
   */
  flushWhenIdle?: boolean;
  /** The least time between the starts of two flushes started on their own (default 75 ms). */
  spacingMs?: number;
  /** Told, after each commit, which debits were written (with the versions the rows got) and how far the journal. */
  onDebitsWritten?: (debits: WrittenDebit[], journaledUpTo: number) => void;
  /** Told, after each commit, each debited user's balance before and after it (low-balance notices). */
  onUserBalances?: (changes: BalanceChange[]) => void;
  onError?: (error: unknown) => void;
  /** `DataExportEnabled`: whether consume logs count on the dashboard; off without it. */
  dashboard?: () => boolean;
  durability?: SettlementDurability;
  /** The most records queued before paid calls are refused (docs/adr/0022). */
  maxQueued?: number;
  /** This process's journal id (`newJournalId()`); the spool file is named after it. */
  journal?: string;
  now?: () => number;
}): BatchWriter {
  const onError = options.onError ?? (() => {});
  const now = options.now ?? Date.now;
  const dashboard = options.dashboard ?? (() => false);
  const maxQueued = options.maxQueued ?? 200_000;
  const journal = options.journal ?? newJournalId();
  const durability = options.durability;
  let seq = 0;
  /**
   * Records not committed yet (those of a flush running now included), in sequence order, and the journal entries
   * beside them (for journaling again).
   */
  const pending: SettlementRecord[] = [];
  const pendingEntries: JournalEntry[] = [];
  let queuedLogCount = 0;
  let flushing: Promise<void> | undefined;
  const flushWhenIdle = options.flushWhenIdle ?? true;
  const spacingMs = options.spacingMs ?? SPACING_MS;
  /** The flush scheduled to start on its own, if any. */
  let scheduled: NodeJS.Timeout | undefined;
  /** When (monotonic ms) the last flush began. */
  let lastStart = Number.NEGATIVE_INFINITY;
  /** The last flush failed: the next waits for the interval instead of hammering a database that is away. */
  let failing = false;
  let closed = false;
  /** The spool refused a record (its disk is full), and when (ms) it was last tried since. */
  let spoolRefused = false;
  let spoolTriedAt = 0;
  /** When (ms) window slots were last pruned (the first flush prunes), and the prune running, if any. */
  let prunedAt = Number.NEGATIVE_INFINITY;
  let pruning: Promise<unknown> | undefined;
  const spool = durability?.spool;
  /** Whether the spool still refuses; tried again at most once a second while it does. */
  const isSpoolRefusing = (): boolean => {
    if (!spoolRefused || !spool) return false;
    const at = now();
    if (at - spoolTriedAt >= 1_000) {
      spoolTriedAt = at;
      spoolRefused = !spool.hasRoom();
    }
    return spoolRefused;
  };

  durability?.attach(() => pendingEntries);

  const chargesOf = (write: UsageWrite): [Account, number][] => {
    const quota = write.debit?.quota ?? 0;
    const charges: [Account, number][] = [];
    if (quota > 0) {
      if (write.debit?.fromUser !== false) charges.push([userAccount(write.userId), quota]);
      if (write.debit?.fromToken) charges.push([tokenAccount(write.tokenId), quota]);
    }
    for (const [account, amount] of write.windows ?? []) if (amount > 0) charges.push([account, amount]);
    return charges;
  };

  /**
   * Writes the queue from its head, `BATCH_RECORDS` a transaction: until it is empty (`all`), or, for a flush
   * started on its own, while whole batches are waiting (what arrives meanwhile goes with the next, spaced, flush).
   * A record leaves the queue only once committed, so a failure leaves everything where it was (and a backlog after
   * an outage is written in transactions of bounded size, not one).
   */
  async function flushNow(all: boolean): Promise<void> {
    lastStart = performance.now();
    let first = true;
    while (pending.length > 0 && (all || first || pending.length >= BATCH_RECORDS)) {
      first = false;
      const count = Math.min(pending.length, BATCH_RECORDS);
      const records = pending.slice(0, count);
      const result = await writeRecords(options.db, records);
      pending.splice(0, count);
      pendingEntries.splice(0, count);
      for (const record of records) if (record.write.log) queuedLogCount -= 1;
      options.onDebitsWritten?.(result.debits, (records[count - 1] as SettlementRecord).seq);
      if (result.balances.length > 0) options.onUserBalances?.(result.balances);
    }
    if (pending.length === 0) durability?.spool?.allWritten();
    if (now() - prunedAt >= PRUNE_EVERY_MS && pruning === undefined) {
      prunedAt = now();
      // Beside the flushes, not in their way: a slot this old is one no window reads or writes.
      pruning = pruneWindowSlots(options.db, Math.floor(prunedAt / 1000) - WINDOW_SLOTS_KEPT_SECONDS)
        .catch(onError)
        .finally(() => {
          pruning = undefined;
        });
    }
  }

  /** One flush at a time; a failure is reported and leaves the records for the next. */
  function runFlush(all: boolean): Promise<void> {
    const next = (flushing ?? Promise.resolve()).then(() => flushNow(all));
    const settled = next.then(
      () => {
        failing = false;
      },
      () => {
        failing = true;
      },
    );
    flushing = settled;
    void settled.finally(() => {
      if (flushing === settled) flushing = undefined;
      scheduleFlush();
    });
    return next;
  }

  const flush = (): Promise<void> => runFlush(true);

  /** Starts a flush once the writer is idle and `spacingMs` has passed since the last began. */
  function scheduleFlush(): void {
    if (!flushWhenIdle || closed || failing || scheduled || flushing || pending.length === 0) return;
    const wait = Math.max(0, lastStart + spacingMs - performance.now());
    scheduled = setTimeout(() => {
      scheduled = undefined;
      if (!flushing) runFlush(false).catch(onError);
    }, wait);
  }

  const timer = setInterval(() => {
    if (flushing || pending.length === 0) return;
    runFlush(false).catch(onError);
  }, options.intervalMs);
  timer.unref();

  return {
    journal,
    add(write) {
      seq += 1;
      const record: SettlementRecord = { journal, seq, write, dashboard: dashboard(), at: now() };
      const payload = durability ? JSON.stringify(record) : '';
      try {
        spool?.append(payload);
      } catch (error) {
        // A full disk: the call was served, so it is queued all the same (written once the database can take it;
        // lost only if the process dies first), and paid calls are refused until the spool has room (`isFull`).
        if (!spoolRefused) onError(error);
        spoolRefused = true;
        spoolTriedAt = now();
      }
      const entry: JournalEntry = { seq, payload, charges: chargesOf(write) };
      durability?.journal(entry);
      pending.push(record);
      pendingEntries.push(entry);
      if (write.log) queuedLogCount += 1;
      scheduleFlush();
    },
    flush,
    queuedLogs: () => queuedLogCount,
    backlog() {
      const oldest = pending[0];
      return {
        records: pending.length,
        capacity: maxQueued,
        oldestSeconds: oldest ? Math.max(0, (now() - oldest.at) / 1000) : 0,
      };
    },
    isFull: () => pending.length >= maxQueued || isSpoolRefusing(),
    async close() {
      closed = true;
      clearInterval(timer);
      clearTimeout(scheduled);
      scheduled = undefined;
      let allWritten = true;
      await flush().catch((error: unknown) => {
        allWritten = false;
        onError(error);
      });
      await pruning;
      await durability?.spool?.close(allWritten && pending.length === 0);
    },
  };
}
