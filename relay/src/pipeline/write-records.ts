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
 */
import { tokenAccount, userAccount, type WrittenDebit } from '@turnpike/core/billing/ledger';
import type { Db, Executor } from '@turnpike/core/db/client';
import { channels, logs, type NewLog, settlementMarks, tokens, users } from '@turnpike/core/db/schema/index';
import { LogType } from '@turnpike/core/domain/logs';
import type { BalanceChange } from '@turnpike/core/notify/notifier';
import { createQuotaDataRepo, hourOf, type QuotaDataIncrement } from '@turnpike/core/repos/quota-data.repo';
import { eq, getTableColumns, inArray, sql } from 'drizzle-orm';

export interface UsageWrite {
  readonly userId: number;
  readonly tokenId: number;
  readonly channelId: number;
  readonly quota: number;
  /** False for an empty answer: nothing charged, not counted (reference §5.4). */
  readonly countRequest: boolean;
  /** The consume log; it also feeds the dashboard counters when `DataExportEnabled`. */
  readonly log: NewLog | undefined;
  /** The charge to take from the user's balance (and the limited token's, `fromToken`). */
  readonly debit?: { readonly quota: number; readonly fromToken: boolean } | undefined;
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
  const records = rows.map((row) => {
    const record: Record<string, unknown> = {};
    for (const column of LOG_COLUMNS) record[column.name] = row[column.key] ?? column.fallback;
    return record;
  });
  return sql`insert into logs (${LOG_COLUMN_LIST}) select ${LOG_COLUMN_LIST} from json_populate_recordset(null::logs, ${JSON.stringify(records)}::json)`;
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
      add(sums.userDebits, write.userId, write.debit.quota);
      if (write.debit.fromToken) add(sums.tokenDebits, write.tokenId, write.debit.quota);
    }
    if (write.countRequest) {
      bump(sums.users, write.userId, write.quota, 1);
      if (write.tokenId > 0) add(sums.tokens, write.tokenId, write.quota);
      if (write.channelId > 0) add(sums.channels, write.channelId, write.quota);
    }
  }
  return sums;
}

/** Locks each journal's mark (created at 0 when new) and returns the sequence each has reached. */
async function lockMarks(
  tx: Executor,
  journals: readonly string[],
  now: number,
): Promise<Map<string, number>> {
  await tx
    .insert(settlementMarks)
    .values(journals.map((journal) => ({ journal, seq: 0, updatedAt: now })))
    .onConflictDoNothing();
  const rows = await tx
    .select({ journal: settlementMarks.journal, seq: settlementMarks.seq })
    .from(settlementMarks)
    .where(inArray(settlementMarks.journal, [...journals]))
    .orderBy(settlementMarks.journal)
    .for('update');
  return new Map(rows.map((row) => [row.journal, row.seq]));
}

/** The charges of records written before, as debits the ledger reads again at the rows' current versions. */
async function rereadDebits(tx: Executor, skipped: readonly SettlementRecord[]): Promise<WrittenDebit[]> {
  const { userDebits, tokenDebits } = aggregate(skipped);
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
  return debits;
}

/** Writes the records not written before, in one transaction; see the file's comment. */
export async function writeRecords(db: Db, records: readonly SettlementRecord[]): Promise<RecordsWritten> {
  const debits: WrittenDebit[] = [];
  const balances: BalanceChange[] = [];
  let written = 0;
  if (records.length === 0) return { debits, balances, written };
  const now = Math.floor(Date.now() / 1000);
  await db.transaction(async (tx) => {
    const journals = [...new Set(records.map((r) => r.journal))];
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
    for (let i = 0; i < sums.logs.length; i += 1000)
      await tx.execute(insertLogsSql(sums.logs.slice(i, i + 1000)));
    for (const id of new Set([...sums.users.keys(), ...sums.userDebits.keys()])) {
      const c = sums.users.get(id) ?? { quota: 0, requests: 0 };
      const debit = sums.userDebits.get(id) ?? 0;
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
        debits.push({ account: userAccount(id), amount: debit, version: row?.version ?? 0 });
        if (row)
          balances.push({ userId: id, before: row.quota + debit, after: row.quota, setting: row.setting });
      }
    }
    for (const id of new Set([...sums.tokens.keys(), ...sums.tokenDebits.keys()])) {
      const debit = sums.tokenDebits.get(id) ?? 0;
      const [row] = await tx
        .update(tokens)
        .set({
          usedQuota: sql`${tokens.usedQuota} + ${sums.tokens.get(id) ?? 0}`,
          accessedTime: now,
          ...(debit > 0
            ? {
                remainQuota: sql`${tokens.remainQuota} - ${debit}`,
                ledgerVersion: sql`${tokens.ledgerVersion} + 1`,
              }
            : {}),
        })
        .where(eq(tokens.id, id))
        .returning({ version: tokens.ledgerVersion });
      if (debit > 0) debits.push({ account: tokenAccount(id), amount: debit, version: row?.version ?? 0 });
    }
    for (const [id, quota] of sums.channels)
      await tx
        .update(channels)
        .set({ usedQuota: sql`${channels.usedQuota} + ${quota}` })
        .where(eq(channels.id, id));
    const buckets = [...sums.dashboard.values()];
    for (let i = 0; i < buckets.length; i += 500)
      await createQuotaDataRepo(tx).addUsage(buckets.slice(i, i + 500));
    for (const [journal, seq] of reached)
      await tx
        .update(settlementMarks)
        .set({ seq, updatedAt: now })
        .where(eq(settlementMarks.journal, journal));
    if (skipped.length > 0) debits.push(...(await rereadDebits(tx, skipped)));
  });
  return { debits, balances, written };
}
