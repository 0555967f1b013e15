import { and, desc, eq, gte, ilike, inArray, like, lt, lte, or, type SQL, sql } from 'drizzle-orm';
import type { Executor } from '../db/client.ts';
import { channels, type Log, logHours, logSearchText, logs, type NewLog } from '../db/schema/index.ts';
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
  /** Exact up to {@link LOG_COUNT_CAP}; above it, the planner's estimate (never less than the cap + 1). */
  readonly total: number;
}

/**
 * Matching rows counted exactly, at most: 1,000 pages of 10. A page never counts millions of rows; past the cap the
 * pager gets the planner's estimate, which is what it needs to draw itself (docs/adr/0031).
 */
export const LOG_COUNT_CAP = 10_000;

const HOUR = 3600;

/** The hours `[from, to)` of a range `[start, end]` (inclusive seconds) that it covers whole; absent ends are open. */
export function wholeHoursOf(
  start: number | undefined,
  end: number | undefined,
): { from?: number; to?: number } {
  return {
    ...(start === undefined ? {} : { from: Math.ceil(start / HOUR) * HOUR }),
    ...(end === undefined ? {} : { to: Math.floor((end + 1) / HOUR) * HOUR }),
  };
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
  /** Rows under `where`: exact up to the cap, else the planner's estimate (see {@link LOG_COUNT_CAP}). */
  async function countOf(where: SQL | undefined): Promise<number> {
    const capped = db
      .select({ one: sql`1` })
      .from(logs)
      .where(where)
      .limit(LOG_COUNT_CAP + 1)
      .as('capped');
    const [row] = await db.select({ total: sql<number>`count(*)`.mapWith(Number) }).from(capped);
    const total = row?.total ?? 0;
    if (total <= LOG_COUNT_CAP) return total;
    // Both drivers answer `{ rows }` (node-postgres and PGlite); the Db type leaves the result unknown.
    const explained = (await db.execute(
      sql`explain (format json) ${db.select({ one: sql`1` }).from(logs).where(where)}`,
    )) as { rows: unknown[] };
    return Math.max(LOG_COUNT_CAP + 1, plannedRows(explained));
  }

  async function page(where: SQL | undefined, request: PageRequest): Promise<LogPage> {
    // Newest first by creation time, the id breaking ties: each filter's index is (column, created_at), so a page
    // is read off the index in this order instead of sorting every match (docs/adr/0031).
    const [total, rows] = await Promise.all([
      countOf(where),
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

  /** Quota of the consume logs under `filter` created in `[start, end]` (inclusive; absent ends are open). */
  async function spentInLogs(filter: LogFilter, start: number | undefined, end: number | undefined) {
    const where = and(
      ...conditionsOf({ ...filter, type: undefined, start: undefined, end: undefined }),
      eq(logs.type, LogType.Consume),
      start === undefined ? undefined : gte(logs.createdAt, start),
      end === undefined ? undefined : lte(logs.createdAt, end),
    );
    const [spent] = await db
      .select({ quota: sql<number>`coalesce(sum(${logs.quota}), 0)`.mapWith(Number) })
      .from(logs)
      .where(where);
    return spent?.quota ?? 0;
  }

  /** Quota of the consume logs in the hours `[from, to)` from `log_hours`, which triggers keep equal to the logs. */
  async function spentInHours(filter: LogFilter, hours: { from?: number; to?: number }) {
    const where = and(
      filter.userId !== undefined ? eq(logHours.userId, filter.userId) : undefined,
      filter.username ? eq(logHours.username, filter.username) : undefined,
      filter.modelName ? like(logHours.modelName, filter.modelName) : undefined,
      hours.from === undefined ? undefined : gte(logHours.createdAt, hours.from),
      hours.to === undefined ? undefined : lt(logHours.createdAt, hours.to),
    );
    const [spent] = await db
      .select({ quota: sql<number>`coalesce(sum(${logHours.quota}), 0)`.mapWith(Number) })
      .from(logHours)
      .where(where);
    return spent?.quota ?? 0;
  }

  /**
   * Quota spent under the filters. Filters `log_hours` keeps (user, username, model, time) read the whole hours
   * from it and only the partial hours at the range's ends from the logs; any other filter sums the logs.
   */
  async function spent(filter: LogFilter): Promise<number> {
    const start = filter.start || undefined;
    const end = filter.end || undefined;
    const byHours = filter.tokenId === undefined && !filter.tokenName && !filter.channelId && !filter.group;
    const hours = wholeHoursOf(start, end);
    if (!byHours || (hours.from !== undefined && hours.to !== undefined && hours.from >= hours.to))
      return spentInLogs(filter, start, end);
    const parts = await Promise.all([
      spentInHours(filter, hours),
      start !== undefined && hours.from !== undefined && start < hours.from
        ? spentInLogs(filter, start, hours.from - 1)
        : 0,
      end !== undefined && hours.to !== undefined && hours.to <= end ? spentInLogs(filter, hours.to, end) : 0,
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
