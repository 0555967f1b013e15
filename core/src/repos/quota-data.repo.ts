import { and, asc, eq, gte, lte, type SQL, sql } from 'drizzle-orm';
import type { Executor } from '../db/client.ts';
import { type NewQuotaData, type QuotaData, quotaData } from '../db/schema/index.ts';

/** The hour a Unix time falls in, as the dashboard buckets usage. */
export const hourOf = (seconds: number): number => seconds - (seconds % 3600);

export interface QuotaDataRange {
  /** Unix seconds, inclusive; compared with the start of each row's hour. */
  readonly start: number;
  readonly end: number;
}

/** One increment of the dashboard counters, as the relay's writer flushes them. */
export interface QuotaDataIncrement {
  readonly userId: number;
  readonly username: string;
  readonly modelName: string;
  /** Any Unix time inside the hour; it is rounded down to the hour. */
  readonly createdAt: number;
  readonly tokenUsed: number;
  readonly count: number;
  readonly quota: number;
}

const inRange = (range: QuotaDataRange): SQL =>
  and(gte(quotaData.createdAt, range.start), lte(quotaData.createdAt, range.end)) as SQL;

/** Usage per user, model and hour for the data dashboard. */
export function createQuotaDataRepo(db: Executor) {
  return {
    /** One user's rows, by id (the user's own view) or by username (the admin filter). */
    async listForUser(
      who: { userId: number } | { username: string },
      range: QuotaDataRange,
    ): Promise<QuotaData[]> {
      const owner = 'userId' in who ? eq(quotaData.userId, who.userId) : eq(quotaData.username, who.username);
      return db
        .select()
        .from(quotaData)
        .where(and(owner, inRange(range)))
        .orderBy(asc(quotaData.createdAt), asc(quotaData.modelName));
    },

    /** Everyone's usage summed per model and hour; the rows carry user id 0 and no username. */
    async listAllByModelAndHour(range: QuotaDataRange): Promise<QuotaData[]> {
      const rows = await db
        .select({
          modelName: quotaData.modelName,
          createdAt: quotaData.createdAt,
          tokenUsed: sql<number>`sum(${quotaData.tokenUsed})`.mapWith(Number),
          count: sql<number>`sum(${quotaData.count})`.mapWith(Number),
          quota: sql<number>`sum(${quotaData.quota})`.mapWith(Number),
        })
        .from(quotaData)
        .where(inRange(range))
        .groupBy(quotaData.modelName, quotaData.createdAt)
        .orderBy(asc(quotaData.createdAt), asc(quotaData.modelName));
      return rows.map((row) => ({ id: 0, userId: 0, username: '', ...row }));
    },

    /**
     * Adds usage to the counters of each (user, model, hour), creating rows as needed. Several increments of
     * the same bucket in one call are summed first, since one statement cannot touch a row twice.
     */
    async addUsage(increments: readonly QuotaDataIncrement[]): Promise<void> {
      const buckets = new Map<string, NewQuotaData>();
      for (const inc of increments) {
        const createdAt = hourOf(inc.createdAt);
        const key = `${inc.userId}\u0000${inc.modelName}\u0000${createdAt}`;
        const seen = buckets.get(key);
        if (seen) {
          seen.tokenUsed = (seen.tokenUsed ?? 0) + inc.tokenUsed;
          seen.count = (seen.count ?? 0) + inc.count;
          seen.quota = (seen.quota ?? 0) + inc.quota;
        } else {
          buckets.set(key, { ...inc, createdAt });
        }
      }
      if (buckets.size === 0) return;
      await db
        .insert(quotaData)
        .values([...buckets.values()])
        .onConflictDoUpdate({
          target: [quotaData.userId, quotaData.modelName, quotaData.createdAt],
          set: {
            username: sql`excluded.username`,
            tokenUsed: sql`${quotaData.tokenUsed} + excluded.token_used`,
            count: sql`${quotaData.count} + excluded.count`,
            quota: sql`${quotaData.quota} + excluded.quota`,
          },
        });
    },
  };
}

export type QuotaDataRepo = ReturnType<typeof createQuotaDataRepo>;
