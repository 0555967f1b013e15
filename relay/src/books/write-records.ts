/**
 * One transaction that writes settled calls to the database (docs/adr/0016, 0022): consume logs, balance debits,
 * the used-quota / request-count counters of users, tokens and channels, and the dashboard's hourly counters
 * (`quota_data`), all for the same records. Each record carries its journal and sequence number; the journal's
 * mark (`settlement_marks`) is locked, records at or below it are skipped, and it is advanced in the same
 * transaction, so a record replayed after a crash (from a dead relay's Redis journal, or a local spool) is written
 * exactly once whoever replays it.
 *
 * Every debited row gets its `ledger_version` bumped; the debits are reported with the versions the rows got so
 * the ledger moves them from "outstanding" into its bases in the right order. A skipped record's charges are
 * reported too (`reread`): another process wrote them, so the ledger reads those bases again. There is no clamp at
 * zero: the ledger admits nothing a balance cannot cover, so a negative balance shows a real debt.
 *
 * The quota windows' charges (docs/adr/0043) are written in the same transaction: each adds to its window's slot in
 * `quota_window_usage` (`amount += charge`, `version += 1`, the row made at the first charge), and is reported with
 * the version the row got, like a debit, so a window's spending and the balances never disagree.
 */
import {
  parseWindowAccount,
  readWindowSlots,
  tokenAccount,
  userAccount,
  type WindowAccount,
  type WindowCharge,
  type WrittenDebit,
  windowAccount,
} from '@turnpike/core/billing/ledger';
import type { Db, Executor } from '@turnpike/core/db/client';
import {
  logs,
  type NewLog,
  quotaWindowUsage,
  settlementMarks,
  tokens,
  users,
} from '@turnpike/core/db/schema/index';
import { LogType } from '@turnpike/core/domain/logs';
import type { BalanceChange } from '@turnpike/core/notify/notifier';
import { hourOf, type QuotaDataIncrement } from '@turnpike/core/repos/quota-data.repo';
import { and, getTableColumns, inArray, lt, notLike, type SQL, sql } from 'drizzle-orm';

export interface UsageWrite {
  readonly userId: number;
  readonly tokenId: number;
  readonly channelId: number;
  readonly quota: number;
  /** False for an empty answer: nothing charged, not counted (reference §5.4). */
  readonly countRequest: boolean;
  /** The consume log; it also feeds the dashboard counters when `DataExportEnabled`. */
  readonly log: NewLog | undefined;
  /**
   * The charge to take from the user's balance (unless a plan's allowance paid it: `fromUser` false, the charge is
   * then in `windows`) and the limited token's (`fromToken`).
   */
  readonly debit?:
    | { readonly quota: number; readonly fromToken: boolean; readonly fromUser?: boolean }
    | undefined;
  /** What each quota window was charged, in the slot its hold was taken in (`SettleResult.windows`). */
  readonly windows?: readonly WindowCharge[] | undefined;
}

/** A settled call on its way to the database: its journal, its place in it, and what to write. */
export interface SettlementRecord {
  readonly journal: string;
  readonly seq: number;
  readonly write: UsageWrite;
  /** Counted on the dashboard (`DataExportEnabled` when it was settled). */
  readonly dashboard: boolean;
  /** When it was settled (Unix ms), for the age of the queue. */
  readonly at: number;
}

export interface RecordsWritten {
  readonly debits: WrittenDebit[];
  readonly balances: BalanceChange[];
  /** Records written now (the others had been written before). */
  readonly written: number;
}

interface Counter {
  quota: number;
  requests: number;
}

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
  return sql`insert into logs (${LOG_COLUMN_LIST}) select ${LOG_COLUMN_LIST} from json_populate_recordset(null::logs, ${logsJson(rows)}::json)`;
}

/** The most logs one statement inserts. */
const LOGS_PER_STATEMENT = 1000;

/** Log rows as the JSON text `json_populate_recordset` reads: every column by its SQL name, defaults filled in. */
function logsJson(rows: readonly NewLog[]): string {
  const records = rows.map((row) => {
    const record: Record<string, unknown> = {};
    for (const column of LOG_COLUMNS) record[column.name] = row[column.key] ?? column.fallback;
    return record;
  });
  return JSON.stringify(records);
}

const bump = (map: Map<number, Counter>, id: number, quota: number, requests: number) => {
  const counter = map.get(id) ?? { quota: 0, requests: 0 };
  counter.quota += quota;
  counter.requests += requests;
  map.set(id, counter);
};
const add = (map: Map<number, number>, id: number, quota: number) => map.set(id, (map.get(id) ?? 0) + quota);

/** The sums of a set of records, per row they touch. */
function aggregate(records: readonly SettlementRecord[]) {
  const sums = {
    logs: [] as NewLog[],
    users: new Map<number, Counter>(),
    tokens: new Map<number, number>(),
    channels: new Map<number, number>(),
    userDebits: new Map<number, number>(),
    tokenDebits: new Map<number, number>(),
    windows: new Map<WindowAccount, number>(),
    dashboard: new Map<string, QuotaDataIncrement>(),
  };
  for (const { write, dashboard } of records) {
    const { log } = write;
    if (log) {
      sums.logs.push(log);
      if (dashboard && log.type === LogType.Consume) {
        const createdAt = hourOf(log.createdAt ?? 0);
        const modelName = log.modelName ?? '';
        const userId = log.userId ?? write.userId;
        const key = `${userId}\u0000${modelName}\u0000${createdAt}`;
        const seen = sums.dashboard.get(key);
        const tokenUsed = (log.promptTokens ?? 0) + (log.completionTokens ?? 0);
        sums.dashboard.set(key, {
          userId,
          username: log.username ?? '',
          modelName,
          createdAt,
          count: (seen?.count ?? 0) + 1,
          quota: (seen?.quota ?? 0) + (log.quota ?? 0),
          tokenUsed: (seen?.tokenUsed ?? 0) + tokenUsed,
        });
      }
    }
    if (write.debit && write.debit.quota > 0) {
      if (write.debit.fromUser !== false) add(sums.userDebits, write.userId, write.debit.quota);
      if (write.debit.fromToken) add(sums.tokenDebits, write.tokenId, write.debit.quota);
    }
    for (const [account, amount] of write.windows ?? [])
      if (amount > 0) sums.windows.set(account, (sums.windows.get(account) ?? 0) + amount);
    if (write.countRequest) {
      bump(sums.users, write.userId, write.quota, 1);
      if (write.tokenId > 0) add(sums.tokens, write.tokenId, write.quota);
      if (write.channelId > 0) add(sums.channels, write.channelId, write.quota);
    }
  }
  return sums;
}

/**
 * Locks each journal's mark (created at 0 when new) and returns the sequence each has reached. A journal's mark exists
 * from its first flush on, so the lock is tried first and the marks are created only for journals it did not find:
 * one statement per flush instead of two. Two writers creating the same mark at once meet on its key (the second
 * waits for the first), and the second lock, a statement of its own, sees the row the first committed.
 */
async function lockMarks(
  tx: Executor,
  journals: readonly string[],
  now: number,
): Promise<Map<string, number>> {
  const lock = async (wanted: readonly string[]) =>
    tx
      .select({ journal: settlementMarks.journal, seq: settlementMarks.seq })
      .from(settlementMarks)
      .where(inArray(settlementMarks.journal, [...wanted]))
      .orderBy(settlementMarks.journal)
      .for('update');
  const marks = new Map((await lock(journals)).map((row) => [row.journal, row.seq]));
  const missing = journals.filter((journal) => !marks.has(journal));
  if (missing.length === 0) return marks;
  await tx
    .insert(settlementMarks)
    .values(missing.map((journal) => ({ journal, seq: 0, updatedAt: now })))
    .onConflictDoNothing();
  for (const row of await lock(missing)) marks.set(row.journal, row.seq);
  return marks;
}

/** The charges of records written before, as debits the ledger reads again at the rows' current versions. */
async function rereadDebits(tx: Executor, skipped: readonly SettlementRecord[]): Promise<WrittenDebit[]> {
  const { userDebits, tokenDebits, windows } = aggregate(skipped);
  const debits: WrittenDebit[] = [];
  if (userDebits.size > 0) {
    const rows = await tx
      .select({ id: users.id, version: users.ledgerVersion })
      .from(users)
      .where(inArray(users.id, [...userDebits.keys()]));
    for (const row of rows)
      debits.push({
        account: userAccount(row.id),
        amount: userDebits.get(row.id) ?? 0,
        version: row.version,
        reread: true,
      });
  }
  if (tokenDebits.size > 0) {
    const rows = await tx
      .select({ id: tokens.id, version: tokens.ledgerVersion })
      .from(tokens)
      .where(inArray(tokens.id, [...tokenDebits.keys()]));
    for (const row of rows)
      debits.push({
        account: tokenAccount(row.id),
        amount: tokenDebits.get(row.id) ?? 0,
        version: row.version,
        reread: true,
      });
  }
  if (windows.size > 0)
    for (const row of await readWindowSlots(tx, [...windows.keys()]))
      debits.push({
        account: row.account,
        amount: windows.get(row.account) ?? 0,
        version: row.version,
        reread: true,
      });
  return debits;
}

/**
 * A row the combined statement updated: a user's or a token's ledger version, and the user's balance after it; or a
 * window's slot (its key in `setting`, its start in `quota`) and the version it got.
 */
interface UpdatedRow {
  readonly kind: 'user' | 'token' | 'window';
  readonly id: number;
  readonly version: number | string;
  readonly quota: number | string | null;
  readonly setting: string | null;
}

/**
 * Everything a batch writes after the marks are locked, as one statement of data-modifying CTEs, each fed one JSON
 * parameter: the logs, the users' and tokens' counters and debits, the channels' used quota, the dashboard's hourly
 * counters and the journals' new marks. Each was a statement of its own: six queries for the ORM to build and six
 * round trips per flush, a few percent of the relay's CPU per call under load (`make bench-duel`, bench/README.md).
 * The database's CPU per flush is about the same either way (it plans one larger statement instead of six small
 * ones). The CTEs touch different tables, so none needs to see another's work. Rows are updated in id order, so
 * two writers' batches lock shared rows alike. The users' and tokens' new ledger versions come back (the ledger
 * orders its bases by them), with each debited user's balance after the debit (low-balance notices).
 */
function writeSumsSql(
  sums: ReturnType<typeof aggregate>,
  logs: readonly NewLog[],
  reached: Map<string, number>,
  now: number,
) {
  const parts: SQL[] = [];
  const results: SQL[] = [];
  if (logs.length > 0)
    parts.push(
      sql`added_logs as (insert into logs (${LOG_COLUMN_LIST}) select ${LOG_COLUMN_LIST} from json_populate_recordset(null::logs, ${logsJson(logs)}::json))`,
    );
  const userIds = [...new Set([...sums.users.keys(), ...sums.userDebits.keys()])].sort((a, b) => a - b);
  if (userIds.length > 0) {
    const rows = userIds.map((id) => {
      const counter = sums.users.get(id);
      return {
        id,
        used: counter?.quota ?? 0,
        requests: counter?.requests ?? 0,
        debit: sums.userDebits.get(id) ?? 0,
      };
    });
    parts.push(sql`updated_users as (update users set
        used_quota = users.used_quota + x.used, request_count = users.request_count + x.requests,
        quota = users.quota - x.debit,
        ledger_version = users.ledger_version + (case when x.debit > 0 then 1 else 0 end)
      from json_to_recordset(${JSON.stringify(rows)}::json) as x(id integer, used bigint, requests integer, debit bigint)
      where users.id = x.id
      returning users.id, users.ledger_version, users.quota, users.setting)`);
    results.push(
      sql`select 'user' as kind, id, ledger_version as version, quota, setting from updated_users`,
    );
  }
  const tokenIds = [...new Set([...sums.tokens.keys(), ...sums.tokenDebits.keys()])].sort((a, b) => a - b);
  if (tokenIds.length > 0) {
    const rows = tokenIds.map((id) => ({
      id,
      used: sums.tokens.get(id) ?? 0,
      debit: sums.tokenDebits.get(id) ?? 0,
    }));
    parts.push(sql`updated_tokens as (update tokens set
        used_quota = tokens.used_quota + x.used, accessed_time = ${now},
        remain_quota = tokens.remain_quota - x.debit,
        ledger_version = tokens.ledger_version + (case when x.debit > 0 then 1 else 0 end)
      from json_to_recordset(${JSON.stringify(rows)}::json) as x(id integer, used bigint, debit bigint)
      where tokens.id = x.id
      returning tokens.id, tokens.ledger_version)`);
    results.push(
      sql`select 'token' as kind, id, ledger_version as version, null::bigint as quota, null::text as setting from updated_tokens`,
    );
  }
  if (sums.windows.size > 0) {
    // In key and slot order, so two writers' batches lock shared rows alike.
    const rows = [...sums.windows]
      .map(([account, amount]) => ({ ...parseWindowAccount(account), amount }))
      .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : a.slot - b.slot));
    parts.push(sql`updated_windows as (insert into quota_window_usage (window_key, slot_start, amount, version)
      select x.key, x.slot, x.amount, 1
      from json_to_recordset(${JSON.stringify(rows)}::json) as x(key varchar, slot bigint, amount bigint)
      on conflict (window_key, slot_start) do update set amount = quota_window_usage.amount + excluded.amount,
        version = quota_window_usage.version + 1
      returning window_key, slot_start, version)`);
    results.push(
      sql`select 'window' as kind, null::integer as id, version, slot_start as quota, window_key::text as setting from updated_windows`,
    );
  }
  if (sums.channels.size > 0) {
    const rows = [...sums.channels].sort(([a], [b]) => a - b).map(([id, used]) => ({ id, used }));
    parts.push(sql`updated_channels as (update channels set used_quota = channels.used_quota + x.used
      from json_to_recordset(${JSON.stringify(rows)}::json) as x(id integer, used bigint)
      where channels.id = x.id)`);
  }
  if (sums.dashboard.size > 0) {
    const rows = [...sums.dashboard.values()]
      .map((bucket) => ({ ...bucket, createdAt: hourOf(bucket.createdAt) }))
      .sort(
        (a, b) =>
          a.userId - b.userId ||
          a.createdAt - b.createdAt ||
          (a.modelName < b.modelName ? -1 : a.modelName > b.modelName ? 1 : 0),
      );
    parts.push(sql`added_hours as (insert into quota_data (user_id, username, model_name, created_at, token_used, count, quota)
      select x."userId", x.username, x."modelName", x."createdAt", x."tokenUsed", x.count, x.quota
      from json_to_recordset(${JSON.stringify(rows)}::json)
        as x("userId" integer, username varchar, "modelName" varchar, "createdAt" bigint, "tokenUsed" bigint, count integer, quota bigint)
      on conflict (user_id, model_name, created_at) do update set username = excluded.username,
        token_used = quota_data.token_used + excluded.token_used, count = quota_data.count + excluded.count,
        quota = quota_data.quota + excluded.quota)`);
  }
  if (reached.size > 0) {
    const rows = [...reached].map(([journal, seq]) => ({ journal, seq }));
    parts.push(sql`advanced_marks as (update settlement_marks set seq = x.seq, updated_at = ${now}
      from json_to_recordset(${JSON.stringify(rows)}::json) as x(journal varchar, seq bigint)
      where settlement_marks.journal = x.journal)`);
  }
  if (parts.length === 0) return undefined;
  const select =
    results.length > 0
      ? sql.join(results, sql` union all `)
      : sql`select null::text as kind, null::integer as id, null::bigint as version, null::bigint as quota, null::text as setting where false`;
  return sql`with ${sql.join(parts, sql`, `)} ${select}`;
}

/**
 * How long a window's slot is kept: longer than any window counts (a month, or a rolling window of at most 31 days)
 * by a margin, so no window ever reads a slot that was removed.
 */
export const WINDOW_SLOTS_KEPT_SECONDS = 40 * 86_400;

/**
 * Removes the window slots that started before `before` (Unix seconds); resolves with how many. A plan's allowance
 * (`p:` keys, docs/adr/0049) is kept: its period can be the whole term of a plan of a year, and its row is what it
 * has spent.
 */
export async function pruneWindowSlots(db: Db, before: number): Promise<number> {
  const removed = await db
    .delete(quotaWindowUsage)
    .where(and(lt(quotaWindowUsage.slotStart, before), notLike(quotaWindowUsage.windowKey, 'p:%')))
    .returning({ key: quotaWindowUsage.windowKey });
  return removed.length;
}

/** Writes the records not written before, in one transaction; see the file's comment. */
export async function writeRecords(db: Db, records: readonly SettlementRecord[]): Promise<RecordsWritten> {
  const debits: WrittenDebit[] = [];
  const balances: BalanceChange[] = [];
  let written = 0;
  if (records.length === 0) return { debits, balances, written };
  const now = Math.floor(Date.now() / 1000);
  await db.transaction(async (tx) => {
    const journals = [...new Set(records.map((r) => r.journal))].sort();
    const marks = await lockMarks(tx, journals, now);
    const fresh: SettlementRecord[] = [];
    const skipped: SettlementRecord[] = [];
    const reached = new Map<string, number>();
    for (const record of records) {
      if (record.seq <= (marks.get(record.journal) ?? 0)) {
        skipped.push(record);
        continue;
      }
      fresh.push(record);
      reached.set(record.journal, Math.max(reached.get(record.journal) ?? 0, record.seq));
    }
    written = fresh.length;
    const sums = aggregate(fresh);
    // The logs past the first thousand go in statements of a thousand of their own, as one JSON text stays bounded.
    for (let i = LOGS_PER_STATEMENT; i < sums.logs.length; i += LOGS_PER_STATEMENT)
      await tx.execute(insertLogsSql(sums.logs.slice(i, i + LOGS_PER_STATEMENT)));
    const statement = writeSumsSql(sums, sums.logs.slice(0, LOGS_PER_STATEMENT), reached, now);
    const updated = statement
      ? ((await tx.execute(statement)) as unknown as { rows: UpdatedRow[] }).rows
      : [];
    const usersUpdated = new Map<number, UpdatedRow>();
    const tokenVersions = new Map<number, number>();
    for (const row of updated)
      if (row.kind === 'user') usersUpdated.set(Number(row.id), row);
      else if (row.kind === 'token') tokenVersions.set(Number(row.id), Number(row.version));
      else {
        const account = windowAccount(row.setting ?? '', Number(row.quota));
        debits.push({ account, amount: sums.windows.get(account) ?? 0, version: Number(row.version) });
      }
    // Every debit is reported, as before, even one whose row is gone (at version 0), so the ledger lets it out.
    for (const [id, debit] of sums.userDebits) {
      const row = usersUpdated.get(id);
      debits.push({ account: userAccount(id), amount: debit, version: Number(row?.version ?? 0) });
      if (row) {
        const after = Number(row.quota);
        balances.push({ userId: id, before: after + debit, after, setting: row.setting ?? '' });
      }
    }
    for (const [id, debit] of sums.tokenDebits)
      debits.push({ account: tokenAccount(id), amount: debit, version: tokenVersions.get(id) ?? 0 });
    if (skipped.length > 0) debits.push(...(await rereadDebits(tx, skipped)));
  });
  return { debits, balances, written };
}
