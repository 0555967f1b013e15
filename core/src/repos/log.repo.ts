import { and, desc, eq, gte, ilike, inArray, like, lt, lte, or, type SQL, sql } from 'drizzle-orm';
import type { Executor } from '../db/client.ts';
import { channels, type Log, logs, type NewLog } from '../db/schema/index.ts';
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
  readonly total: number;
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

export function createLogRepo(db: Executor) {
  async function page(where: SQL | undefined, request: PageRequest): Promise<LogPage> {
    const [count] = await db
      .select({ total: sql<number>`count(*)`.mapWith(Number) })
      .from(logs)
      .where(where);
    const rows = await db
      .select({ log: logs, channelName: channels.name })
      .from(logs)
      .leftJoin(channels, eq(channels.id, logs.channelId))
      .where(where)
      .orderBy(desc(logs.id))
      .limit(request.pageSize)
      .offset((request.page - 1) * request.pageSize);
    return { rows, total: count?.total ?? 0 };
  }

  return {
    /** Newest first, with the current name of each row's channel. */
    list(filter: LogFilter, request: PageRequest): Promise<LogPage> {
      return page(and(...conditionsOf(filter)), request);
    },

    /** Rows whose content, model, token or username contains `keyword` (any case); newest first. */
    search(keyword: string, scope: { userId?: number | undefined }, request: PageRequest): Promise<LogPage> {
      const pattern = `%${escapeLike(keyword)}%`;
      const matches = or(
        ilike(logs.content, pattern),
        ilike(logs.modelName, pattern),
        ilike(logs.tokenName, pattern),
        ilike(logs.username, pattern),
      );
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
      const [spent] = await db
        .select({ quota: sql<number>`coalesce(sum(${logs.quota}), 0)`.mapWith(Number) })
        .from(logs)
        .where(where);
      const [recent] = await db
        .select({
          rpm: sql<number>`count(*)`.mapWith(Number),
          tpm: sql<number>`coalesce(sum(${logs.promptTokens} + ${logs.completionTokens}), 0)`.mapWith(Number),
        })
        .from(logs)
        .where(and(where, gte(logs.createdAt, now - 60), lte(logs.createdAt, now)));
      return { quota: spent?.quota ?? 0, rpm: recent?.rpm ?? 0, tpm: recent?.tpm ?? 0 };
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
