/**
 * Moves a new-api or one-api database into Turnpike's: users, tokens, channels, options, redemption codes, top-ups,
 * drawings, tasks, usage logs and dashboard data. Source ids are kept, so tokens, logs and tasks still point at
 * their users and channels. The import only ever adds: a row Turnpike already holds (same id, or for the dashboard
 * the same user, model and hour) is left as it is, so running it again writes nothing and a catch-up run after the
 * old gateway served more traffic adds only what is new. Balances Turnpike has since changed are never reset.
 */
import { and, eq, inArray, sql } from 'drizzle-orm';
import type { AnyPgColumn, PgTable } from 'drizzle-orm/pg-core';
import type { SealedBox } from '../crypto/sealed-box.ts';
import type { Db, Executor } from '../db/client.ts';
import {
  type Channel,
  channels,
  checkins,
  logs,
  midjourneys,
  options as optionRows,
  passkeyCredentials,
  quotaData,
  quotaWindowUsage,
  redemptions,
  setups,
  subscriptionPlans,
  tasks,
  tokens,
  topUps,
  twoFaBackupCodes,
  twoFas,
  userSubscriptions,
  users,
} from '../db/schema/index.ts';
import { PLAN_RESET_PERIODS, type PlanResetPeriod } from '../domain/closed-sets.ts';
import { Role } from '../domain/users.ts';
import { isOptionKey, readOptionText } from '../options/registry.ts';
import { allowanceKey, allowancePeriod, isRunning } from '../plans/periods.ts';
import { createAbilityRepo } from '../repos/ability.repo.ts';
import type { SecondFactorKeys } from '../second-factors/factor-box.ts';
import { channelDrops, channelReads, importedFromOf, mapChannel } from './channels.ts';
import {
  checkinMapping,
  logMapping,
  midjourneyMapping,
  type PlanResetTerms,
  quotaDataMapping,
  redemptionMapping,
  subscriptionPlanMapping,
  type TableMapping,
  taskMapping,
  tokenMapping,
  topUpMapping,
  userMapping,
  userSubscriptionMapping,
} from './mapping.ts';
import { backupCodeMapping, passkeyMapping, twoFaMapping } from './second-factors.ts';
import type { SourceReader, SourceRow } from './source.ts';
import { toInt, toText } from './values.ts';

export interface ImportOptions {
  readonly source: SourceReader;
  /** Turnpike's database; absent for a dry run into an installation that has none yet (it holds nothing). */
  readonly db: Db | undefined;
  /** Seals channel keys as the console API does; required unless `dryRun`. */
  readonly box?: SealedBox | undefined;
  /**
   * Seals TOTP secrets as the console API does (`createSecondFactorKeys(CRYPTO_SECRET)`); without it a real run
   * leaves second factors behind and says so.
   */
  readonly secondFactorKeys?: SecondFactorKeys | undefined;
  readonly dryRun: boolean;
  /** Write beside users that did not come from this source. */
  readonly merge: boolean;
  readonly skipLogs: boolean;
  /** Unix seconds: logs and dashboard rows older than this stay behind. */
  readonly logsSince?: number | undefined;
  readonly batchSize?: number;
  readonly progress?: (line: string) => void;
}

export interface TableReport {
  readonly table: string;
  /** Rows read from the source (after --logs-since). */
  source: number;
  /** Rows written, or that a dry run would write. */
  written: number;
  /** Rows Turnpike already holds. */
  present: number;
  /** Rows not carried, by reason. */
  skipped: Record<string, number>;
  /** Columns of the source this version does not have (Turnpike's default is used). */
  absentColumns: string[];
  /** Columns of the source that are not carried, with why. */
  droppedColumns: string[];
  /** Why the whole table was not read, when it was not. */
  notRead?: string;
}

export interface ImportReport {
  readonly dryRun: boolean;
  readonly flavour: 'new-api' | 'one-api';
  readonly tables: TableReport[];
  /** Option keys the source has and Turnpike does not know. */
  readonly unknownOptions: string[];
  /** Option keys whose value Turnpike refuses, with why. */
  readonly invalidOptions: string[];
  /** Option keys Turnpike already holds with another value (kept). */
  readonly keptOptions: string[];
  /** Source tables Turnpike has no place for. */
  readonly uncarriedTables: string[];
  readonly notes: string[];
  /** What running servers must read again: rows they may hold stale or have remembered as missing. */
  readonly changed: { users: number[]; tokens: number[]; channels: number[]; options: string[] };
}

/** The import would mix an unrelated gateway's users with Turnpike's own; `--merge` allows it. */
export class ImportRefusedError extends Error {
  override name = 'ImportRefusedError';
}

/** Tables of the reference the import knows it leaves behind, and why. */
const UNCARRIED_TABLES: Readonly<Record<string, string>> = {
  abilities: 'rebuilt from the channels',
  setups: 'written once when the users arrive',
  models: 'model metadata: Turnpike has its own catalogue',
  vendors: 'model vendors: Turnpike has its own catalogue',
  prefill_groups: 'prefill groups are not offered',
  subscriptions: 'Turnpike has no such table (plans are subscription_plans and user_subscriptions)',
  subscription_orders: 'plan orders: the paid ones are in top_ups, and a pending one is paid again here',
  subscription_plan_items:
    "per-model plan items of new-api's first plans: an allowance is for every model here",
  user_subscription_items:
    "per-model plan items of new-api's first plans: an allowance is for every model here",
};

const CARRIED_TABLES = [
  'users',
  'tokens',
  'channels',
  'options',
  'redemptions',
  'top_ups',
  'midjourneys',
  'tasks',
  'logs',
  'quota_data',
  'two_fas',
  'two_fa_backup_codes',
  'passkey_credentials',
  'checkins',
  'subscription_plans',
  'user_subscriptions',
] as const;

const SERIAL_TABLES = [
  'users',
  'tokens',
  'channels',
  'redemptions',
  'top_ups',
  'midjourneys',
  'tasks',
  'logs',
  'quota_data',
  'checkins',
  'subscription_plans',
  'user_subscriptions',
] as const;

interface IdTable {
  readonly table: PgTable;
  readonly id: AnyPgColumn;
  readonly userColumn?: 'userId';
}

const ID_TABLES: Record<string, IdTable> = {
  users: { table: users, id: users.id },
  tokens: { table: tokens, id: tokens.id, userColumn: 'userId' },
  redemptions: { table: redemptions, id: redemptions.id },
  top_ups: { table: topUps, id: topUps.id, userColumn: 'userId' },
  midjourneys: { table: midjourneys, id: midjourneys.id, userColumn: 'userId' },
  tasks: { table: tasks, id: tasks.id, userColumn: 'userId' },
  logs: { table: logs, id: logs.id, userColumn: 'userId' },
  checkins: { table: checkins, id: checkins.id, userColumn: 'userId' },
  subscription_plans: { table: subscriptionPlans, id: subscriptionPlans.id },
  user_subscriptions: { table: userSubscriptions, id: userSubscriptions.id, userColumn: 'userId' },
};

const count = (skipped: Record<string, number>, reason: string, by = 1) => {
  skipped[reason] = (skipped[reason] ?? 0) + by;
};

export async function importGateway(options: ImportOptions): Promise<ImportReport> {
  const { source, dryRun } = options;
  const batchSize = options.batchSize ?? 1000;
  const progress = options.progress ?? (() => {});
  if (!dryRun && !options.box) throw new Error('a real import needs the channel key box');
  const schema = await source.schema();
  // new-api can keep its logs in a database of their own (LOG_SQL_DSN): such a source carries logs only.
  const logsOnly = !schema.has('users') && schema.has('logs');
  if (!logsOnly && (!schema.has('users') || !schema.has('tokens') || !schema.has('channels')))
    throw new Error(
      'the source has no users, tokens and channels tables: is it a new-api or one-api database?',
    );
  const flavour: ImportReport['flavour'] =
    logsOnly || schema.has('setups') || schema.get('tokens')?.has('model_limits_enabled')
      ? 'new-api'
      : 'one-api';
  const report: ImportReport = {
    dryRun,
    flavour,
    tables: [],
    unknownOptions: [],
    invalidOptions: [],
    keptOptions: [],
    uncarriedTables: [],
    notes: [],
    changed: { users: [], tokens: [], channels: [], options: [] },
  };
  for (const table of [...schema.keys()].sort()) {
    if ((CARRIED_TABLES as readonly string[]).includes(table)) continue;
    const why = UNCARRIED_TABLES[table] ?? 'Turnpike has no such table';
    report.uncarriedTables.push(`${table}: ${why}`);
  }

  const targetReady = options.db ? await hasTargetSchema(options.db) : false;
  if (!targetReady && !dryRun) throw new Error('the Turnpike database is not migrated');
  // Every read of the target below waits for targetReady and every write for !dryRun: without a database neither.
  const db = options.db as Db;

  const newTable = (
    table: string,
    mapping?: { reads: readonly string[]; drops: Readonly<Record<string, string>> },
  ) => {
    const columns = schema.get(table);
    const entry: TableReport = {
      table,
      source: 0,
      written: 0,
      present: 0,
      skipped: {},
      absentColumns: [],
      droppedColumns: [],
    };
    if (!columns) entry.notRead = 'the source has no such table (an older version)';
    else if (mapping) {
      entry.absentColumns = mapping.reads.filter(
        (c) => !columns.has(c) && !ONE_API_ONLY.has(c) && !(flavour === 'one-api' && NEW_API_ONLY.has(c)),
      );
      entry.droppedColumns = [...columns]
        .filter((c) => !mapping.reads.includes(c) && !IGNORED_COLUMNS.has(c))
        .map((c) => `${c}: ${mapping.drops[c] ?? 'Turnpike has no such field'}`);
    }
    report.tables.push(entry);
    return entry;
  };
  const readable = (table: string, reads: readonly string[]) =>
    reads.filter((c) => schema.get(table)?.has(c));

  // --- users: who is already there decides whether the import may write at all
  const userReport = newTable('users', userMapping);
  const userPlan = logsOnly ? LOGS_ONLY_PLAN : await planUsers(source, db, targetReady, batchSize);
  if (logsOnly) report.notes.push('a source with logs only: its logs join the users imported before');
  if (userPlan.foreign.length > 0 && !options.merge) {
    const names = userPlan.foreign
      .slice(0, 5)
      .map((u) => u.username)
      .join(', ');
    throw new ImportRefusedError(
      `the Turnpike database already holds ${userPlan.foreign.length} user(s) that are not from this source (${names}); pass --merge to import beside them`,
    );
  }
  if (userPlan.setupRoot)
    report.notes.push(
      `the setup's root account "${userPlan.setupRoot.username}" is replaced by the source's users (sign in with the source's root password)`,
    );
  if (!dryRun && userPlan.setupRoot) {
    await db.delete(users).where(eq(users.id, userPlan.setupRoot.id));
    report.changed.users.push(userPlan.setupRoot.id);
  }
  const skippedUsers = new Set<number>();
  let sawRoot = false;
  await carryPaged({
    table: 'users',
    entry: userReport,
    mapping: userMapping,
    decide(row) {
      const byId = userPlan.targetById.get(row.id as number);
      if (byId !== undefined && byId !== row.username) {
        skippedUsers.add(row.id as number);
        return 'id held by another Turnpike user';
      }
      const byName = userPlan.targetByName.get(row.username as string);
      if (byName !== undefined && byName !== row.id) {
        skippedUsers.add(row.id as number);
        return 'username held by another Turnpike user';
      }
      if ((row.role as number) >= Role.Root) sawRoot = true;
      return undefined;
    },
  });
  if (!dryRun && sawRoot) {
    const [setUp] = await db.select({ id: setups.id }).from(setups).limit(1);
    if (!setUp)
      await db.insert(setups).values({ version: 'import', initializedAt: Math.floor(Date.now() / 1000) });
  }

  await carryPaged({ table: 'tokens', entry: newTable('tokens', tokenMapping), mapping: tokenMapping });
  await carrySecondFactors();
  await carryChannels();
  await carryOptions();
  await carryPaged({
    table: 'redemptions',
    entry: newTable('redemptions', redemptionMapping),
    mapping: redemptionMapping,
  });
  await carryPaged({ table: 'top_ups', entry: newTable('top_ups', topUpMapping), mapping: topUpMapping });
  await carryPaged({
    table: 'midjourneys',
    entry: newTable('midjourneys', midjourneyMapping),
    mapping: midjourneyMapping,
  });
  await carryPaged({ table: 'tasks', entry: newTable('tasks', taskMapping), mapping: taskMapping });
  await carryPaged({
    table: 'checkins',
    entry: newTable('checkins', checkinMapping),
    mapping: checkinMapping,
  });
  await carryPlans();
  const logReport = newTable('logs', logMapping);
  const quotaReport = newTable('quota_data', quotaDataMapping);
  if (options.skipLogs) {
    logReport.notRead = logReport.notRead ?? 'skipped (--skip-logs)';
    quotaReport.notRead = quotaReport.notRead ?? 'skipped (--skip-logs)';
  } else {
    await carryPaged({
      table: 'logs',
      entry: logReport,
      mapping: logMapping,
      history: true,
      resumable: true,
    });
    await carryQuotaData(quotaReport);
  }
  if (!dryRun) await raiseSequences(db);
  return report;

  /** Pages through one table, skipping rows of users that were not carried and rows Turnpike already holds. */
  async function carryPaged<T extends Record<string, unknown>>(step: {
    table: string;
    entry: TableReport;
    mapping: TableMapping<T>;
    history?: boolean;
    resumable?: boolean;
    decide?: (row: T) => string | undefined;
  }): Promise<void> {
    const { table, entry, mapping } = step;
    if (entry.notRead) return;
    const target = ID_TABLES[table]!;
    const since = step.history ? options.logsSince : undefined;
    entry.source = await source.count(table, since);
    const columns = readable(table, mapping.reads);
    let afterId = 0;
    let seen = 0;
    if (step.resumable && targetReady && !options.merge) {
      // A run cut short goes on after the last row it wrote; rows below are already there. Logs Turnpike wrote
      // itself since an earlier import have ids above the source's and do not count.
      const sourceMax = await source.maxId(table);
      const [last] = await db
        .select({ id: sql<number>`max(${target.id})`.mapWith(Number) })
        .from(target.table)
        .where(sql`${target.id} <= ${sourceMax}`);
      if (last?.id && (await isSameLog(last.id))) {
        afterId = last.id;
        const rest = await countAfter(table, afterId, since);
        entry.present += entry.source - rest;
        seen = entry.source - rest;
        if (rest > 0 && rest < entry.source) progress(`${table}: resuming after id ${afterId}`);
      }
    }
    for (;;) {
      const page = await source.page(table, columns, { afterId, limit: batchSize, createdSince: since });
      if (page.length === 0) break;
      afterId = toInt(page.at(-1)?.id);
      seen += page.length;
      const rows: T[] = [];
      for (const raw of page) {
        const mapped = mapping.map(raw);
        if ('skip' in mapped) {
          count(entry.skipped, mapped.skip);
          continue;
        }
        const row = mapped.row;
        if (target.userColumn && skippedUsers.has(row[target.userColumn] as number)) {
          count(entry.skipped, 'its user was not carried');
          continue;
        }
        const refusal = step.decide?.(row);
        if (refusal) {
          count(entry.skipped, refusal);
          continue;
        }
        rows.push(row);
      }
      const present = await existingIds(
        target,
        rows.map((r) => r.id as number),
      );
      const missing = rows.filter((r) => !present.has(r.id as number));
      if (table === 'logs' && present.size > 0) {
        // A log id Turnpike already used for a log of its own (a catch-up after it served traffic): not the same row.
        const held = await db
          .select({ id: logs.id, userId: logs.userId, createdAt: logs.createdAt })
          .from(logs)
          .where(inArray(logs.id, [...present]));
        const foreign = new Set(
          held
            .filter((h) => {
              const mine = rows.find((r) => r.id === h.id);
              return mine && (mine.userId !== h.userId || mine.createdAt !== h.createdAt);
            })
            .map((h) => h.id),
        );
        if (foreign.size > 0)
          count(entry.skipped, 'its id is held by a log Turnpike wrote itself', foreign.size);
        entry.present += rows.length - missing.length - foreign.size;
      } else entry.present += rows.length - missing.length;
      if (dryRun) entry.written += missing.length;
      else if (missing.length > 0) {
        const written = await db
          .insert(target.table)
          .values(missing as never)
          .onConflictDoNothing()
          .returning({ id: target.id });
        entry.written += written.length;
        // A relay remembers keys it found no token for: any tokens.changed makes it look again.
        if (table === 'tokens' && report.changed.tokens.length < 1000)
          report.changed.tokens.push(...written.map((w) => Number(w.id)).slice(0, 1000));
        if (written.length < missing.length)
          count(
            entry.skipped,
            'a unique value (key, code, trade number) is held by another row',
            missing.length - written.length,
          );
      }
      if (entry.source > batchSize) progress(`${table}: ${seen}/${entry.source}`);
    }
  }

  /** Whether the Turnpike log of this id is the source's (not one Turnpike wrote itself under the same id). */
  async function isSameLog(id: number): Promise<boolean> {
    const [mine] = await source.page('logs', ['id', 'user_id', 'created_at'], { afterId: id - 1, limit: 1 });
    const [held] = await db
      .select({ userId: logs.userId, createdAt: logs.createdAt })
      .from(logs)
      .where(eq(logs.id, id));
    return (
      toInt(mine?.id) === id &&
      toInt(mine?.user_id) === held?.userId &&
      toInt(mine?.created_at) === held?.createdAt
    );
  }

  async function countAfter(table: string, afterId: number, since: number | undefined): Promise<number> {
    let total = 0;
    let cursor = afterId;
    // Counting by pages keeps the reader interface small; only the ids travel.
    for (;;) {
      const page = await source.page(table, ['id'], { afterId: cursor, limit: 10_000, createdSince: since });
      if (page.length === 0) return total;
      total += page.length;
      cursor = toInt(page.at(-1)?.id);
    }
  }

  async function existingIds(target: IdTable, ids: number[]): Promise<Set<number>> {
    if (!targetReady || ids.length === 0) return new Set();
    const rows = await db.select({ id: target.id }).from(target.table).where(inArray(target.id, ids));
    return new Set(rows.map((r) => Number(r.id)));
  }

  async function carryChannels(): Promise<void> {
    const entry = newTable('channels', { reads: channelReads, drops: channelDrops });
    if (entry.notRead) return;
    const rows = await source.all('channels', readable('channels', channelReads));
    entry.source = rows.length;
    const current = targetReady ? await db.select().from(channels) : [];
    const byId = new Map(current.map((c) => [c.id, c]));
    const byMarker = new Map<string, Channel>();
    for (const c of current) {
      const marker = importedFromOf(c.otherInfo);
      if (marker) byMarker.set(`${marker.channel}/${marker.key}`, c);
    }
    const withId: (typeof channels.$inferInsert)[] = [];
    const withoutId: (typeof channels.$inferInsert)[] = [];
    for (const raw of rows) {
      const mapped = mapChannel(raw, { isOneApi: flavour === 'one-api' });
      if ('skip' in mapped) {
        count(entry.skipped, mapped.skip);
        continue;
      }
      report.notes.push(...mapped.notes);
      for (const imported of mapped.channels) {
        if (byMarker.has(`${imported.sourceId}/${imported.keyIndex}`)) {
          entry.present += 1;
          continue;
        }
        const holder = byId.get(imported.sourceId);
        const key = options.box ? options.box.seal(imported.row.key) : '';
        if (imported.keyIndex === 0 && !holder) {
          withId.push({ ...imported.row, id: imported.sourceId, key });
        } else if (
          imported.keyIndex === 0 &&
          holder &&
          !importedFromOf(holder.otherInfo) &&
          holder.name === imported.row.name &&
          holder.type === imported.row.type
        ) {
          entry.present += 1;
        } else {
          // A further key, or a source id Turnpike already uses for another channel: a new id and a marker.
          const info = JSON.parse(imported.row.otherInfo ?? '{}') as Record<string, unknown>;
          info.imported_from = { channel: imported.sourceId, key: imported.keyIndex };
          withoutId.push({ ...imported.row, key, otherInfo: JSON.stringify(info) });
        }
      }
    }
    entry.written = withId.length + withoutId.length;
    if (dryRun || entry.written === 0) return;
    await db.transaction(async (tx) => {
      const inserted: Channel[] = [];
      if (withId.length > 0) inserted.push(...(await tx.insert(channels).values(withId).returning()));
      await raiseSequence(tx, 'channels');
      if (withoutId.length > 0) inserted.push(...(await tx.insert(channels).values(withoutId).returning()));
      await createAbilityRepo(tx).rebuild(inserted);
      report.changed.channels.push(...inserted.map((c) => c.id));
    });
  }

  /**
   * TOTP factors, their unused backup codes and passkeys (second-factors.ts). Add-only like the rest: a user whose
   * factor Turnpike already holds keeps it, and backup codes come only with the factor they belong to, so a user
   * who enrolled again in Turnpike does not get the old gateway's codes beside the new ones.
   */
  /**
   * Plans and users' subscriptions (docs/adr/0049). A subscription takes its plan's reset terms; what a running one
   * spent in new-api's current period is written to its allowance's current period here, so it is not spent twice.
   */
  async function carryPlans(): Promise<void> {
    await carryPaged({
      table: 'subscription_plans',
      entry: newTable('subscription_plans', subscriptionPlanMapping),
      mapping: subscriptionPlanMapping,
    });
    const terms = new Map<number, PlanResetTerms>();
    if (schema.has('subscription_plans'))
      for (const row of await source.all(
        'subscription_plans',
        readable('subscription_plans', ['id', 'quota_reset_period', 'quota_reset_custom_seconds']),
      )) {
        const period = toText(row.quota_reset_period) || 'never';
        if ((PLAN_RESET_PERIODS as readonly string[]).includes(period))
          terms.set(toInt(row.id), {
            quotaResetPeriod: period as PlanResetPeriod,
            quotaResetCustomSeconds: toInt(row.quota_reset_custom_seconds),
          });
      }
    const mapping = userSubscriptionMapping(terms);
    const spent: { id: number; key: string; slot: number; amount: number }[] = [];
    const now = Math.floor(Date.now() / 1000);
    const zone = targetReady ? await timeZoneOf(db) : 'UTC';
    await carryPaged({
      table: 'user_subscriptions',
      entry: newTable('user_subscriptions', mapping),
      mapping,
      decide(row) {
        const allowance = {
          id: row.id as number,
          amountTotal: row.amountTotal ?? 0,
          quotaResetPeriod: row.quotaResetPeriod as PlanResetPeriod,
          quotaResetCustomSeconds: row.quotaResetCustomSeconds ?? 0,
          startTime: row.startTime ?? 0,
          endTime: row.endTime ?? 0,
        };
        if (row.status === 'active' && row.amountUsed > 0 && isRunning(allowance, now)) {
          spent.push({
            id: allowance.id,
            key: allowanceKey(allowance),
            slot: allowancePeriod(allowance, now, zone).start,
            amount: row.amountUsed,
          });
        }
        return undefined;
      },
    });
    if (dryRun || spent.length === 0) return;
    await db
      .insert(quotaWindowUsage)
      .values(spent.map(({ key, slot, amount }) => ({ windowKey: key, slotStart: slot, amount })))
      .onConflictDoNothing();
    report.notes.push(
      `${spent.length} running subscription(s): what they spent in new-api's current period counts in today's allowance`,
    );
  }

  async function carrySecondFactors(): Promise<void> {
    const keys = options.secondFactorKeys;
    const factorReport = newTable('two_fas', twoFaMapping);
    const codeReport = newTable('two_fa_backup_codes', backupCodeMapping);
    const passkeyReport = newTable('passkey_credentials', passkeyMapping);
    if (!dryRun && !keys) {
      for (const entry of [factorReport, codeReport, passkeyReport])
        entry.notRead ??= 'no CRYPTO_SECRET was given to seal two-factor secrets with';
      return;
    }
    const mine = (userId: number, entry: TableReport) => {
      if (!skippedUsers.has(userId)) return true;
      count(entry.skipped, 'its user was not carried');
      return false;
    };

    const carried = new Set<number>();
    const held = new Set<number>();
    if (!factorReport.notRead) {
      const rows = await source.all('two_fas', readable('two_fas', twoFaMapping.reads));
      factorReport.source = rows.length;
      if (targetReady)
        for (const r of await db.select({ userId: twoFas.userId }).from(twoFas)) held.add(r.userId);
      const writes: (typeof twoFas.$inferInsert)[] = [];
      for (const raw of rows) {
        const mapped = twoFaMapping.map(raw);
        if ('skip' in mapped) count(factorReport.skipped, mapped.skip);
        else if (!mine(mapped.row.userId, factorReport)) continue;
        else if (held.has(mapped.row.userId)) factorReport.present += 1;
        else {
          const { plainSecret, ...row } = mapped.row;
          writes.push({ ...row, secret: keys ? keys.sealSecret(plainSecret) : '' });
          carried.add(row.userId);
        }
      }
      factorReport.written = writes.length;
      if (!dryRun && writes.length > 0) await db.insert(twoFas).values(writes).onConflictDoNothing();
    }

    if (!codeReport.notRead) {
      const rows = await source.all(
        'two_fa_backup_codes',
        readable('two_fa_backup_codes', backupCodeMapping.reads),
      );
      codeReport.source = rows.length;
      const writes: (typeof twoFaBackupCodes.$inferInsert)[] = [];
      for (const raw of rows) {
        const mapped = backupCodeMapping.map(raw);
        if ('skip' in mapped) count(codeReport.skipped, mapped.skip);
        else if (!mine(mapped.row.userId, codeReport)) continue;
        else if (carried.has(mapped.row.userId)) writes.push(mapped.row);
        else if (held.has(mapped.row.userId)) codeReport.present += 1;
        else count(codeReport.skipped, 'its two-factor sign-in was not carried');
      }
      codeReport.written = writes.length;
      if (!dryRun && writes.length > 0) await db.insert(twoFaBackupCodes).values(writes);
    }

    if (!passkeyReport.notRead) {
      const rows = await source.all(
        'passkey_credentials',
        readable('passkey_credentials', passkeyMapping.reads),
      );
      passkeyReport.source = rows.length;
      const present = new Set(
        targetReady
          ? (await db.select({ id: passkeyCredentials.credentialId }).from(passkeyCredentials)).map(
              (r) => r.id,
            )
          : [],
      );
      const writes: (typeof passkeyCredentials.$inferInsert)[] = [];
      for (const raw of rows) {
        const mapped = passkeyMapping.map(raw);
        if ('skip' in mapped) count(passkeyReport.skipped, mapped.skip);
        else if (!mine(mapped.row.userId, passkeyReport)) continue;
        else if (present.has(mapped.row.credentialId)) passkeyReport.present += 1;
        else {
          present.add(mapped.row.credentialId);
          writes.push(mapped.row);
        }
      }
      passkeyReport.written = writes.length;
      if (!dryRun && writes.length > 0)
        await db.insert(passkeyCredentials).values(writes).onConflictDoNothing();
    }
  }

  async function carryOptions(): Promise<void> {
    const entry = newTable('options', { reads: ['key', 'value'], drops: {} });
    if (entry.notRead) return;
    const rows = await source.all('options', ['key', 'value']);
    entry.source = rows.length;
    const current = new Map(
      targetReady ? (await db.select().from(optionRows)).map((o) => [o.key, o.value] as const) : [],
    );
    // Into an empty setup the source's settings win over what the setup wizard stored.
    const sourceWins = userPlan.fresh;
    const writes: { key: string; value: string }[] = [];
    for (const raw of rows) {
      const key = toText(raw.key);
      if (!isOptionKey(key)) {
        report.unknownOptions.push(key);
        count(entry.skipped, 'not an option Turnpike knows');
        continue;
      }
      const checked = readOptionText(key, toText(raw.value));
      if (!checked.ok) {
        report.invalidOptions.push(checked.message);
        count(entry.skipped, 'a value Turnpike refuses');
        continue;
      }
      const held = current.get(key);
      if (held === checked.value) {
        entry.present += 1;
        continue;
      }
      if (held !== undefined && !sourceWins) {
        report.keptOptions.push(key);
        entry.present += 1;
        continue;
      }
      writes.push({ key, value: checked.value });
    }
    entry.written = writes.length;
    if (dryRun || writes.length === 0) return;
    await db
      .insert(optionRows)
      .values(writes)
      .onConflictDoUpdate({ target: optionRows.key, set: { value: sql`excluded.value` } });
    report.changed.options.push(...writes.map((w) => w.key));
  }

  /** Dashboard rows, summed per user, model and hour (Turnpike keeps one row for each). */
  async function carryQuotaData(entry: TableReport): Promise<void> {
    if (entry.notRead) return;
    const since = options.logsSince;
    entry.source = await source.count('quota_data', since);
    const columns = readable('quota_data', quotaDataMapping.reads);
    const byHour = new Map<string, typeof quotaData.$inferInsert>();
    let afterId = 0;
    for (;;) {
      const page = await source.page('quota_data', columns, {
        afterId,
        limit: batchSize,
        createdSince: since,
      });
      if (page.length === 0) break;
      afterId = toInt(page.at(-1)?.id);
      for (const raw of page) {
        const mapped = quotaDataMapping.map(raw);
        if ('skip' in mapped) continue;
        const row = mapped.row;
        if (skippedUsers.has(row.userId)) {
          count(entry.skipped, 'its user was not carried');
          continue;
        }
        const key = `${row.userId}\u0000${row.modelName}\u0000${row.createdAt}`;
        const held = byHour.get(key);
        if (!held) {
          const { id: _id, ...rest } = row;
          byHour.set(key, rest);
          continue;
        }
        count(entry.skipped, 'summed into the row of the same user, model and hour');
        held.tokenUsed = (held.tokenUsed ?? 0) + (row.tokenUsed ?? 0);
        held.count = (held.count ?? 0) + (row.count ?? 0);
        held.quota = (held.quota ?? 0) + (row.quota ?? 0);
      }
    }
    const all = [...byHour.values()];
    for (let i = 0; i < all.length; i += batchSize) {
      const batch = all.slice(i, i + batchSize);
      const present = targetReady ? await existingHours(batch) : new Set<string>();
      const missing = batch.filter(
        (r) => !present.has(`${r.userId}\u0000${r.modelName}\u0000${r.createdAt}`),
      );
      entry.present += batch.length - missing.length;
      if (dryRun) entry.written += missing.length;
      else if (missing.length > 0) {
        const written = await db
          .insert(quotaData)
          .values(missing)
          .onConflictDoNothing()
          .returning({ id: quotaData.id });
        entry.written += written.length;
      }
    }
  }

  async function existingHours(batch: (typeof quotaData.$inferInsert)[]): Promise<Set<string>> {
    const userIds = [...new Set(batch.map((r) => r.userId))];
    const hours = [...new Set(batch.map((r) => r.createdAt))];
    const rows = await db
      .select({ userId: quotaData.userId, modelName: quotaData.modelName, createdAt: quotaData.createdAt })
      .from(quotaData)
      .where(and(inArray(quotaData.userId, userIds), inArray(quotaData.createdAt, hours)));
    return new Set(rows.map((r) => `${r.userId}\u0000${r.modelName}\u0000${r.createdAt}`));
  }
}

/** Columns only one of the two systems ever had: their absence is the version, not a gap. */
const ONE_API_ONLY = new Set([
  // either of the two names of a user's registration time
  'created_time',
  'created_at',
  // logs: one-api and forks only
  'request_id',
  'models',
  'subnet',
  'elapsed_time',
  'config',
]);
const NEW_API_ONLY = new Set([
  'model_limits_enabled',
  'model_limits',
  'allow_ips',
  'group',
  'deleted_at',
  'use_time',
  'token_id',
  'ip',
  'other',
  'setting',
  'aff_count',
  'aff_quota',
  'aff_history',
  'telegram_id',
  'linux_do_id',
  'test_model',
  'openai_organization',
  'status_code_mapping',
  'auto_ban',
  'other_info',
  'tag',
  'param_override',
  'header_override',
  'channel_info',
  'max_input_tokens',
  'used_user_id',
]);
/** Source columns nobody needs told about. */
const IGNORED_COLUMNS = new Set(['verification_code']);

interface UserPlan {
  /** Turnpike's user ids and names. */
  readonly targetById: Map<number, string>;
  readonly targetByName: Map<string, number>;
  /** Turnpike users that are not from this source (same id and name). */
  readonly foreign: { id: number; username: string }[];
  /** The only user of an empty setup: its root, which the source's users replace. */
  readonly setupRoot: { id: number; username: string } | undefined;
  /** Turnpike held no data of its own before (no users, or an empty setup). */
  readonly fresh: boolean;
}

const LOGS_ONLY_PLAN: UserPlan = {
  targetById: new Map(),
  targetByName: new Map(),
  foreign: [],
  setupRoot: undefined,
  fresh: false,
};

async function planUsers(
  source: SourceReader,
  db: Db,
  targetReady: boolean,
  batchSize: number,
): Promise<UserPlan> {
  const held = targetReady
    ? await db.select({ id: users.id, username: users.username, role: users.role }).from(users)
    : [];
  const sourceById = new Map<number, string>();
  let afterId = 0;
  for (;;) {
    const page: SourceRow[] = await source.page('users', ['id', 'username'], {
      afterId,
      limit: batchSize * 10,
    });
    if (page.length === 0) break;
    for (const row of page) sourceById.set(toInt(row.id), toText(row.username).trim());
    afterId = toInt(page.at(-1)?.id);
  }
  let setupRoot: UserPlan['setupRoot'];
  const only = held.length === 1 ? held[0] : undefined;
  if (
    only &&
    only.role >= Role.Root &&
    sourceById.get(only.id) !== only.username &&
    (await isEmptySetup(db, only.id))
  )
    setupRoot = { id: only.id, username: only.username };
  const kept = setupRoot ? [] : held;
  return {
    targetById: new Map(kept.map((u) => [u.id, u.username])),
    targetByName: new Map(kept.map((u) => [u.username, u.id])),
    foreign: kept.filter((u) => sourceById.get(u.id) !== u.username),
    setupRoot,
    fresh: held.length === 0 || setupRoot !== undefined,
  };
}

/** Nothing but the root account: no tokens, channels or logs. */
async function isEmptySetup(db: Db, rootId: number): Promise<boolean> {
  const [row] = await db
    .execute<{ n: number }>(sql`select
    (select count(*) from ${tokens}) + (select count(*) from ${channels}) +
    (select count(*) from ${logs} where ${logs.userId} <> ${rootId} or ${logs.type} = 2) as n`)
    .then((r) => rowsOf<{ n: number }>(r));
  return Number(row?.n ?? 0) === 0;
}

function rowsOf<T>(result: unknown): T[] {
  return (Array.isArray(result) ? result : (result as { rows: T[] }).rows) as T[];
}

async function hasTargetSchema(db: Db): Promise<boolean> {
  const [row] = await db
    .execute<{ t: string | null }>(sql`select to_regclass('users')::text as t`)
    .then((r) => rowsOf<{ t: string | null }>(r));
  return Boolean(row?.t);
}

/** Moves an id sequence past the ids the import wrote, so the next row Turnpike adds gets a fresh id. */
async function raiseSequence(db: Executor, table: (typeof SERIAL_TABLES)[number]): Promise<void> {
  await db.execute(
    sql.raw(
      `select setval(pg_get_serial_sequence('"${table}"', 'id'), greatest((select coalesce(max(id), 0) from "${table}"), (select last_value from ${sequenceName(table)}), 1))`,
    ),
  );
}

const sequenceName = (table: string) => `"${table}_id_seq"`;

/** The zone the target counts calendar periods in (`QuotaWindowTimeZone`, UTC when unset). */
async function timeZoneOf(db: Db): Promise<string> {
  const [row] = await db
    .select({ value: optionRows.value })
    .from(optionRows)
    .where(eq(optionRows.key, 'QuotaWindowTimeZone'))
    .limit(1);
  return row?.value || 'UTC';
}

async function raiseSequences(db: Db): Promise<void> {
  for (const table of SERIAL_TABLES) await raiseSequence(db, table);
}
