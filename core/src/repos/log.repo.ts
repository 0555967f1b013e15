import { and, desc, eq, gte, ilike, inArray, like, lt, lte, or, type SQL, sql } from 'drizzle-orm';
import type { Executor } from '../db/client.ts';
import {
  channels,
  type Log,
  logDays,
  logHours,
  logSearchText,
  logs,
  type NewLog,
} from '../db/schema/index.ts';
import { LogType } from '../domain/logs.ts';

export const nowSeconds = (): number => Math.floor(Date.now() / 1000);

/** Filters of the log lists and stats; absent fields do not filter. */
export interface LogFilter {
  readonly userId?: number | undefined;
  readonly tokenId?: number | undefined;
  /** 0 or absent: every type. */
  readonly type?: number | undefined;
  readonly username?: string | undefined;
  readonly tokenName?: string | undefined;
  /** A LIKE pattern, as in the reference: a plain name matches exactly, `%` and `_` are wildcards. */
  readonly modelName?: string | undefined;
  /** Unix seconds, inclusive. */
  readonly start?: number | undefined;
  /** Unix seconds, inclusive. */
  readonly end?: number | undefined;
  readonly channelId?: number | undefined;
  readonly group?: string | undefined;
}

export interface PageRequest {
  /** From 1. */
  readonly page: number;
  readonly pageSize: number;
}

export interface LogPage {
  readonly rows: { log: Log; channelName: string | null }[];
  /**
   * Exact up to {@link LOG_COUNT_CAP} ({@link LOG_SEARCH_COUNT_CAP} for the search); above it, the planner's
   * estimate (never less than the cap + 1).
   */
  readonly total: number;
}

/**
 * Matching rows counted exactly, at most: 1,000 pages of 10. A page never counts millions of rows; past the cap the
 * pager gets the planner's estimate, which is what it needs to draw itself (docs/adr/0031).
 */
export const LOG_COUNT_CAP = 10_000;

/**
 * The keyword search counts exactly up to 1,000 matches (100 pages of 10): a common word's matches are found by
 * testing rows one by one, so counting 10,000 of them would cost more than the page.
 */
export const LOG_SEARCH_COUNT_CAP = 1_000;

const HOUR = 3600;
const DAY = 86_400;

/** Half-open seconds `[from, to)`; an absent end is open. */
export interface Span {
  readonly from?: number;
  readonly to?: number;
}

const spanOf = (from: number | undefined, to: number | undefined): Span => ({
  ...(from === undefined ? {} : { from }),
  ...(to === undefined ? {} : { to }),
});
const up = (time: number | undefined, unit: number) =>
  time === undefined ? undefined : Math.ceil(time / unit) * unit;
const down = (time: number | undefined, unit: number) =>
  time === undefined ? undefined : Math.floor(time / unit) * unit;
const isEmpty = (from: number | undefined, to: number | undefined) =>
  from !== undefined && to !== undefined && from >= to;

/**
 * Splits the range `[start, end]` (inclusive seconds; absent ends are open) into the UTC days it covers whole, the
 * whole hours beside them and the seconds left at its two ends: each second of the range in exactly one span.
 */
export function splitRange(
  start: number | undefined,
  end: number | undefined,
): { days: Span[]; hours: Span[]; seconds: Span[] } {
  const to = end === undefined ? undefined : end + 1;
  const [hourFrom, hourTo] = [up(start, HOUR), down(to, HOUR)];
  if (isEmpty(hourFrom, hourTo)) return { days: [], hours: [], seconds: [spanOf(start, to)] };
  const seconds: Span[] = [];
  if (start !== undefined && hourFrom !== undefined && start < hourFrom)
    seconds.push(spanOf(start, hourFrom));
  if (to !== undefined && hourTo !== undefined && hourTo < to) seconds.push(spanOf(hourTo, to));
  const [dayFrom, dayTo] = [up(hourFrom, DAY), down(hourTo, DAY)];
  if (isEmpty(dayFrom, dayTo)) return { days: [], hours: [spanOf(hourFrom, hourTo)], seconds };
  const hours: Span[] = [];
  if (hourFrom !== undefined && dayFrom !== undefined && hourFrom < dayFrom)
    hours.push(spanOf(hourFrom, dayFrom));
  if (hourTo !== undefined && dayTo !== undefined && dayTo < hourTo) hours.push(spanOf(dayTo, hourTo));
  return { days: [spanOf(dayFrom, dayTo)], hours, seconds };
}

/** Log types that count as usage records, the ones retention deletes. */
export const USAGE_LOG_TYPES: readonly number[] = [LogType.Consume, LogType.Error];

/** Rows deleted per statement, so a large purge never holds one long lock on the table. */
const DELETE_BATCH = 5000;

/** Escapes LIKE wildcards so a keyword is matched as typed. */
const escapeLike = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

function conditionsOf(filter: LogFilter): SQL[] {
  const conditions: (SQL | undefined)[] = [
    filter.userId !== undefined ? eq(logs.userId, filter.userId) : undefined,
    filter.tokenId !== undefined ? eq(logs.tokenId, filter.tokenId) : undefined,
    filter.type ? eq(logs.type, filter.type) : undefined,
    filter.username ? eq(logs.username, filter.username) : undefined,
    filter.tokenName ? eq(logs.tokenName, filter.tokenName) : undefined,
    filter.modelName ? like(logs.modelName, filter.modelName) : undefined,
    filter.start ? gte(logs.createdAt, filter.start) : undefined,
    filter.end ? lte(logs.createdAt, filter.end) : undefined,
    filter.channelId ? eq(logs.channelId, filter.channelId) : undefined,
    filter.group ? eq(logs.group, filter.group) : undefined,
  ];
  return conditions.filter((c): c is SQL => c !== undefined);
}

/** The planner's row estimate out of an `EXPLAIN (FORMAT JSON)` answer (parsed or as text, by driver). */
function plannedRows(result: { rows: unknown[] }): number {
  const cell = Object.values((result.rows[0] ?? {}) as Record<string, unknown>)[0];
  const plan = (typeof cell === 'string' ? JSON.parse(cell) : cell) as { Plan?: { 'Plan Rows'?: number } }[];
  return Math.round(plan[0]?.Plan?.['Plan Rows'] ?? 0);
}

export function createLogRepo(db: Executor) {
  /** Rows under `where`: exact up to `cap`, else the planner's estimate (see {@link LOG_COUNT_CAP}). */
  async function countOf(where: SQL | undefined, cap: number): Promise<number> {
    const capped = db
      .select({ one: sql`1` })
      .from(logs)
      .where(where)
      .limit(cap + 1)
      .as('capped');
    const [row] = await db.select({ total: sql<number>`count(*)`.mapWith(Number) }).from(capped);
    const total = row?.total ?? 0;
    if (total <= cap) return total;
    // Both drivers answer `{ rows }` (node-postgres and PGlite); the Db type leaves the result unknown.
    const explained = (await db.execute(
      sql`explain (format json) ${db.select({ one: sql`1` }).from(logs).where(where)}`,
    )) as { rows: unknown[] };
    return Math.max(cap + 1, plannedRows(explained));
  }

  async function page(where: SQL | undefined, request: PageRequest, cap = LOG_COUNT_CAP): Promise<LogPage> {
    // Newest first by creation time, the id breaking ties: each filter's index is (column, created_at), so a page
    // is read off the index in this order instead of sorting every match (docs/adr/0031).
    const [total, rows] = await Promise.all([
      countOf(where, cap),
      db
        .select({ log: logs, channelName: channels.name })
        .from(logs)
        .leftJoin(channels, eq(channels.id, logs.channelId))
        .where(where)
        .orderBy(desc(logs.createdAt), desc(logs.id))
        .limit(request.pageSize)
        .offset((request.page - 1) * request.pageSize),
    ]);
    return { rows, total };
  }

  /** The condition "created in one of the spans" on a `created_at` column; undefined when they are open. */
  function inSpans(
    column: typeof logs.createdAt | typeof logHours.createdAt | typeof logDays.createdAt,
    spans: readonly Span[],
  ) {
    return or(
      ...spans.map(
        (span) =>
          and(
            span.from === undefined ? undefined : gte(column, span.from),
            span.to === undefined ? undefined : lt(column, span.to),
          ) ?? sql`true`,
      ),
    );
  }

  /** Quota of the consume logs under `filter` (its own time range aside) created in the spans. */
  async function spentInLogs(filter: LogFilter, spans: readonly Span[]): Promise<number> {
    if (spans.length === 0) return 0;
    const where = and(
      ...conditionsOf({ ...filter, type: undefined, start: undefined, end: undefined }),
      eq(logs.type, LogType.Consume),
      inSpans(logs.createdAt, spans),
    );
    const [spent] = await db
      .select({ quota: sql<number>`coalesce(sum(${logs.quota}), 0)`.mapWith(Number) })
      .from(logs)
      .where(where);
    return spent?.quota ?? 0;
  }

  /** Quota of the consume logs in the spans from `log_days`, which triggers keep equal to the logs. */
  async function spentInDays(filter: LogFilter, spans: readonly Span[]): Promise<number> {
    if (spans.length === 0) return 0;
    const where = and(
      filter.userId !== undefined ? eq(logDays.userId, filter.userId) : undefined,
      filter.username ? eq(logDays.username, filter.username) : undefined,
      filter.modelName ? like(logDays.modelName, filter.modelName) : undefined,
      filter.tokenName ? eq(logDays.tokenName, filter.tokenName) : undefined,
      filter.channelId ? eq(logDays.channelId, filter.channelId) : undefined,
      filter.group ? eq(logDays.group, filter.group) : undefined,
      inSpans(logDays.createdAt, spans),
    );
    const [spent] = await db
      .select({ quota: sql<number>`coalesce(sum(${logDays.quota}), 0)`.mapWith(Number) })
      .from(logDays)
      .where(where);
    return spent?.quota ?? 0;
  }

  /** The same from `log_hours`, which keeps the user, username and model only. */
  async function spentInHours(filter: LogFilter, spans: readonly Span[]): Promise<number> {
    if (spans.length === 0) return 0;
    const where = and(
      filter.userId !== undefined ? eq(logHours.userId, filter.userId) : undefined,
      filter.username ? eq(logHours.username, filter.username) : undefined,
      filter.modelName ? like(logHours.modelName, filter.modelName) : undefined,
      inSpans(logHours.createdAt, spans),
    );
    const [spent] = await db
      .select({ quota: sql<number>`coalesce(sum(${logHours.quota}), 0)`.mapWith(Number) })
      .from(logHours)
      .where(where);
    return spent?.quota ?? 0;
  }

  /**
   * Quota spent under the filters: whole days from `log_days`, whole hours beside them from `log_hours` and only the
   * seconds left at the range's ends from the logs (docs/adr/0031). A token name, channel or group, which `log_hours`
   * does not keep, reads those hours from the logs too (through that filter's `(column, created_at)` index); a token
   * id (not a filter of the console's totals) sums the logs.
   */
  async function spent(filter: LogFilter): Promise<number> {
    const start = filter.start || undefined;
    const end = filter.end || undefined;
    if (filter.tokenId !== undefined)
      return spentInLogs(filter, [spanOf(start, end === undefined ? undefined : end + 1)]);
    const { days, hours, seconds } = splitRange(start, end);
    const byHours = !filter.tokenName && !filter.channelId && !filter.group;
    const parts = await Promise.all([
      spentInDays(filter, days),
      byHours ? spentInHours(filter, hours) : 0,
      spentInLogs(filter, byHours ? seconds : [...hours, ...seconds]),
    ]);
    return parts[0] + parts[1] + parts[2];
  }

  return {
    /** Newest first, with the current name of each row's channel. */
    list(filter: LogFilter, request: PageRequest): Promise<LogPage> {
      return page(and(...conditionsOf(filter)), request);
    },

    /**
     * Rows whose content, model, token or username contains `keyword` (any case); newest first. One `ILIKE` over
     * the four joined by chr(1), which the trigram index serves; a keyword holding that character is matched field
     * by field instead, so nothing matches across two fields.
     */
    search(keyword: string, scope: { userId?: number | undefined }, request: PageRequest): Promise<LogPage> {
      const pattern = `%${escapeLike(keyword)}%`;
      const matches = keyword.includes('\u0001')
        ? or(
            ilike(logs.content, pattern),
            ilike(logs.modelName, pattern),
            ilike(logs.tokenName, pattern),
            ilike(logs.username, pattern),
          )
        : sql`${logSearchText(logs)} ilike ${pattern}`;
      return page(
        scope.userId !== undefined ? and(eq(logs.userId, scope.userId), matches) : matches,
        request,
        LOG_SEARCH_COUNT_CAP,
      );
    },

    /**
     * Quota spent by consume rows under the filters, and the requests (rpm) and tokens (tpm) of the consume
     * rows among them created in the 60 seconds up to `now`. The type filter does not apply: only usage
     * costs quota.
     */
    async stat(filter: LogFilter, now: number): Promise<{ quota: number; rpm: number; tpm: number }> {
      const where = and(...conditionsOf({ ...filter, type: undefined }), eq(logs.type, LogType.Consume));
      const [quota, [recent]] = await Promise.all([
        spent(filter),
        db
          .select({
            rpm: sql<number>`count(*)`.mapWith(Number),
            tpm: sql<number>`coalesce(sum(${logs.promptTokens} + ${logs.completionTokens}), 0)`.mapWith(
              Number,
            ),
          })
          .from(logs)
          .where(and(where, gte(logs.createdAt, now - 60), lte(logs.createdAt, now))),
      ]);
      return { quota, rpm: recent?.rpm ?? 0, tpm: recent?.tpm ?? 0 };
    },

    /**
     * Deletes rows created before `timestamp` (Unix seconds), of the given types only when `types` is set,
     * in batches. Returns how many rows went.
     */
    async deleteBefore(timestamp: number, options: { types?: readonly number[] } = {}): Promise<number> {
      const where = and(
        lt(logs.createdAt, timestamp),
        options.types ? inArray(logs.type, [...options.types]) : undefined,
      );
      let deleted = 0;
      for (;;) {
        const batch = db.select({ id: logs.id }).from(logs).where(where).limit(DELETE_BATCH);
        const gone = await db.delete(logs).where(inArray(logs.id, batch)).returning({ id: logs.id });
        deleted += gone.length;
        if (gone.length < DELETE_BATCH) return deleted;
      }
    },

    // Writes of single log rows from the console side (top-ups, admin edits, bonuses); the relay batches its own.
    async insert(row: Omit<NewLog, 'createdAt'> & { createdAt?: number }): Promise<void> {
      await db.insert(logs).values({ createdAt: nowSeconds(), ...row });
    },
    async system(userId: number, username: string, content: string): Promise<void> {
      await db
        .insert(logs)
        .values({ userId, username, content, type: LogType.System, createdAt: nowSeconds() });
    },
    async manage(userId: number, username: string, content: string): Promise<void> {
      await db
        .insert(logs)
        .values({ userId, username, content, type: LogType.Manage, createdAt: nowSeconds() });
    },
  };
}

export type LogRepo = ReturnType<typeof createLogRepo>;
