/**
 * The batching writer (STYLE "Hot path"): consume logs, balance debits and the used-quota / request-count counters
 * of users, tokens and channels are aggregated in memory and written every `intervalMs` in one transaction, and
 * on close (graceful shutdown flushes them). A failed flush keeps its data for the next one, so nothing is lost
 * while the database is briefly away.
 *
 * A debit and its consume log are written in the same transaction, so the database never holds one without the
 * other: a crash loses at most the last interval of both, in the payer's favour (docs/adr/0016). Every debited
 * row gets its `ledger_version` bumped, and the committed debits with the versions the rows got are reported to
 * `onDebitsWritten`, so the ledger moves them from "outstanding" into its bases in the right order. There is no
 * clamp at zero: the ledger admits nothing a balance cannot cover, so a negative balance would show a real debt
 * (an administrator lowering a balance under calls in flight) instead of hiding it.
 *
 * The data dashboard's `quota_data` counters (reference §9.3) ride along: every consume log adds (1 request,
 * its quota, prompt + completion tokens) to the bucket of (user, model, hour), and the buckets are upserted by
 * increment every `DataExportInterval` minutes (and on close), so a crash loses at most one interval of them.
 */
import { tokenAccount, userAccount, type WrittenDebit } from '@turnpike/core/billing/ledger';
import type { Db } from '@turnpike/core/db/client';
import { channels, logs, type NewLog, tokens, users } from '@turnpike/core/db/schema/index';
import { LogType } from '@turnpike/core/domain/logs';
import type { BalanceChange } from '@turnpike/core/notify/notifier';
import { createQuotaDataRepo, hourOf, type QuotaDataIncrement } from '@turnpike/core/repos/quota-data.repo';
import { eq, getTableColumns, sql } from 'drizzle-orm';

export interface UsageWrite {
  readonly userId: number;
  readonly tokenId: number;
  readonly channelId: number;
  readonly quota: number;
  /** False for an empty answer: nothing charged, not counted (reference §5.4). */
  readonly countRequest: boolean;
  /** The consume log; it also feeds the dashboard counters when `DataExportEnabled`. */
  readonly log: NewLog | undefined;
  /** The charge to take from the user's balance (and the limited token's, `fromToken`) at the next flush. */
  readonly debit?: { readonly quota: number; readonly fromToken: boolean } | undefined;
}

/** `DataExportEnabled` and `DataExportInterval` (in ms), read when they are needed. */
export interface DashboardSettings {
  readonly enabled: boolean;
  readonly intervalMs: number;
}

export interface BatchWriter {
  add(write: UsageWrite): void;
  /** Writes everything pending now, dashboard counters included. */
  flush(): Promise<void>;
  /** Consume logs waiting for the next flush (a gauge of `/metrics`). */
  queuedLogs(): number;
  /** Stops the timer and flushes what is left. */
  close(): Promise<void>;
}

interface Counter {
  quota: number;
  requests: number;
}

interface Batch {
  logs: NewLog[];
  users: Map<number, Counter>;
  tokens: Map<number, number>;
  channels: Map<number, number>;
  userDebits: Map<number, number>;
  tokenDebits: Map<number, number>;
  dashboard: Map<string, QuotaDataIncrement>;
}

const emptyBatch = (): Batch => ({
  logs: [],
  users: new Map(),
  tokens: new Map(),
  channels: new Map(),
  userDebits: new Map(),
  tokenDebits: new Map(),
  dashboard: new Map(),
});

/** The columns of a log row as written (all but the serial id), with the default of each. */
const LOG_COLUMNS = Object.entries(getTableColumns(logs))
  .filter(([, column]) => column.name !== 'id')
  .map(([key, column]) => ({
    key: key as keyof NewLog,
    name: column.name,
    fallback: column.default ?? null,
  }));
const LOG_COLUMN_LIST = sql.raw(LOG_COLUMNS.map((c) => `"${c.name}"`).join(', '));

/**
 * One INSERT of many logs with a single JSON parameter: building a VALUES list of thousands of parameters cost the
 * relay a fifth of its CPU under load (make bench), a JSON text is built natively.
 */
function insertLogsSql(rows: readonly NewLog[]) {
  const records = rows.map((row) => {
    const record: Record<string, unknown> = {};
    for (const column of LOG_COLUMNS) record[column.name] = row[column.key] ?? column.fallback;
    return record;
  });
  return sql`insert into logs (${LOG_COLUMN_LIST}) select ${LOG_COLUMN_LIST} from json_populate_recordset(null::logs, ${JSON.stringify(records)}::json)`;
}

export function createBatchWriter(options: {
  db: Db;
  intervalMs: number;
  /** Told, after each commit, which debits were written and the ledger version each row got. */
  onDebitsWritten?: (debits: WrittenDebit[]) => void;
  /** Told, after each commit, each debited user's balance before and after it (low-balance notices). */
  onUserBalances?: (changes: BalanceChange[]) => void;
  onError?: (error: unknown) => void;
  /** Without it the dashboard counters are off. */
  dashboard?: () => DashboardSettings;
  now?: () => number;
}): BatchWriter {
  const onError = options.onError ?? (() => {});
  const now = options.now ?? Date.now;
  const dashboardSettings = options.dashboard ?? (() => ({ enabled: false, intervalMs: 0 }));
  let pending = emptyBatch();
  let lastDashboardFlush = now();
  let flushing: Promise<void> | undefined;

  const bump = (map: Map<number, Counter>, id: number, quota: number, requests: number) => {
    const counter = map.get(id) ?? { quota: 0, requests: 0 };
    counter.quota += quota;
    counter.requests += requests;
    map.set(id, counter);
  };
  const add = (map: Map<number, number>, id: number, quota: number) =>
    map.set(id, (map.get(id) ?? 0) + quota);
  const addBucket = (map: Map<string, QuotaDataIncrement>, inc: QuotaDataIncrement) => {
    const key = `${inc.userId}\u0000${inc.modelName}\u0000${inc.createdAt}`;
    const seen = map.get(key);
    map.set(
      key,
      seen
        ? {
            ...inc,
            count: seen.count + inc.count,
            quota: seen.quota + inc.quota,
            tokenUsed: seen.tokenUsed + inc.tokenUsed,
          }
        : inc,
    );
  };

  /** Merges a batch that could not be written back in front of what arrived meanwhile. */
  const restore = (batch: Batch) => {
    pending.logs = [...batch.logs, ...pending.logs];
    for (const [id, c] of batch.users) bump(pending.users, id, c.quota, c.requests);
    for (const [id, q] of batch.tokens) add(pending.tokens, id, q);
    for (const [id, q] of batch.channels) add(pending.channels, id, q);
    for (const [id, q] of batch.userDebits) add(pending.userDebits, id, q);
    for (const [id, q] of batch.tokenDebits) add(pending.tokenDebits, id, q);
    for (const inc of batch.dashboard.values()) addBucket(pending.dashboard, inc);
  };

  async function flushNow(includeDashboard: boolean): Promise<void> {
    const dashboardDue = includeDashboard && pending.dashboard.size > 0;
    if (
      pending.logs.length === 0 &&
      pending.users.size === 0 &&
      pending.tokens.size === 0 &&
      pending.channels.size === 0 &&
      pending.userDebits.size === 0 &&
      pending.tokenDebits.size === 0 &&
      !dashboardDue
    )
      return;
    const batch: Batch = { ...pending, dashboard: dashboardDue ? pending.dashboard : new Map() };
    pending = { ...emptyBatch(), dashboard: dashboardDue ? new Map() : pending.dashboard };
    const written: WrittenDebit[] = [];
    const balances: BalanceChange[] = [];
    try {
      await options.db.transaction(async (tx) => {
        for (let i = 0; i < batch.logs.length; i += 1000)
          await tx.execute(insertLogsSql(batch.logs.slice(i, i + 1000)));
        for (const id of new Set([...batch.users.keys(), ...batch.userDebits.keys()])) {
          const c = batch.users.get(id) ?? { quota: 0, requests: 0 };
          const debit = batch.userDebits.get(id) ?? 0;
          const [row] = await tx
            .update(users)
            .set({
              usedQuota: sql`${users.usedQuota} + ${c.quota}`,
              requestCount: sql`${users.requestCount} + ${c.requests}`,
              ...(debit > 0
                ? { quota: sql`${users.quota} - ${debit}`, ledgerVersion: sql`${users.ledgerVersion} + 1` }
                : {}),
            })
            .where(eq(users.id, id))
            .returning({ version: users.ledgerVersion, quota: users.quota, setting: users.setting });
          if (debit > 0) {
            written.push({ account: userAccount(id), amount: debit, version: row?.version ?? 0 });
            if (row)
              balances.push({
                userId: id,
                before: row.quota + debit,
                after: row.quota,
                setting: row.setting,
              });
          }
        }
        for (const id of new Set([...batch.tokens.keys(), ...batch.tokenDebits.keys()])) {
          const debit = batch.tokenDebits.get(id) ?? 0;
          const [row] = await tx
            .update(tokens)
            .set({
              usedQuota: sql`${tokens.usedQuota} + ${batch.tokens.get(id) ?? 0}`,
              accessedTime: Math.floor(now() / 1000),
              ...(debit > 0
                ? {
                    remainQuota: sql`${tokens.remainQuota} - ${debit}`,
                    ledgerVersion: sql`${tokens.ledgerVersion} + 1`,
                  }
                : {}),
            })
            .where(eq(tokens.id, id))
            .returning({ version: tokens.ledgerVersion });
          if (debit > 0)
            written.push({ account: tokenAccount(id), amount: debit, version: row?.version ?? 0 });
        }
        for (const [id, quota] of batch.channels) {
          await tx
            .update(channels)
            .set({ usedQuota: sql`${channels.usedQuota} + ${quota}` })
            .where(eq(channels.id, id));
        }
        const buckets = [...batch.dashboard.values()];
        for (let i = 0; i < buckets.length; i += 500)
          await createQuotaDataRepo(tx).addUsage(buckets.slice(i, i + 500));
      });
    } catch (error) {
      restore(batch);
      throw error;
    }
    options.onDebitsWritten?.(written);
    if (balances.length > 0) options.onUserBalances?.(balances);
  }

  function flush(includeDashboard = true): Promise<void> {
    const run = () => flushNow(includeDashboard);
    const previous = flushing ?? Promise.resolve();
    const next = previous.then(run, run);
    flushing = next.finally(() => {
      if (flushing === next) flushing = undefined;
    });
    return next;
  }

  const tick = () => {
    const at = now();
    const dashboardDue = at - lastDashboardFlush >= dashboardSettings().intervalMs;
    if (dashboardDue) lastDashboardFlush = at;
    flush(dashboardDue).catch(onError);
  };
  const timer = setInterval(tick, options.intervalMs);
  timer.unref();

  return {
    add(write) {
      const { log } = write;
      if (log) {
        pending.logs.push(log);
        if (log.type === LogType.Consume && dashboardSettings().enabled) {
          const createdAt = log.createdAt ?? Math.floor(now() / 1000);
          addBucket(pending.dashboard, {
            userId: log.userId ?? write.userId,
            username: log.username ?? '',
            modelName: log.modelName ?? '',
            createdAt: hourOf(createdAt),
            count: 1,
            quota: log.quota ?? 0,
            tokenUsed: (log.promptTokens ?? 0) + (log.completionTokens ?? 0),
          });
        }
      }
      if (write.debit && write.debit.quota > 0) {
        add(pending.userDebits, write.userId, write.debit.quota);
        if (write.debit.fromToken) add(pending.tokenDebits, write.tokenId, write.debit.quota);
      }
      if (write.countRequest) {
        bump(pending.users, write.userId, write.quota, 1);
        if (write.tokenId > 0) add(pending.tokens, write.tokenId, write.quota);
        if (write.channelId > 0) add(pending.channels, write.channelId, write.quota);
      }
    },
    flush: () => flush(true),
    queuedLogs: () => pending.logs.length,
    async close() {
      clearInterval(timer);
      await flush(true);
    },
  };
}
