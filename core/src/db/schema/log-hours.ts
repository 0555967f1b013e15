import { bigserial, index, integer, pgTable, uniqueIndex, varchar } from 'drizzle-orm/pg-core';
import { quotaAmount, unixSeconds } from './columns.ts';

/**
 * Consume logs summed per user, username, model and hour, for the console's totals (`/api/log/stat`) at the hours
 * beside the whole days of `log_days`. Kept by triggers on `logs` (migration 0012): every insert, update, delete or
 * truncate of consume logs changes it in the same statement, so it always equals the sums over the logs themselves,
 * whoever wrote or deleted them (the relay's writer, a channel test, an import, retention). Unlike `quota_data`, which
 * follows DataExportEnabled and is never deleted. Never written by the application. Not per token, channel and group
 * as `log_days` is: per hour that key would make nearly a row per log (docs/adr/0031).
 */
export const logHours = pgTable(
  'log_hours',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    userId: integer('user_id').notNull(),
    username: varchar('username', { length: 64 }).notNull(),
    modelName: varchar('model_name', { length: 255 }).notNull(),
    /** Start of the hour, Unix seconds. */
    createdAt: unixSeconds('created_at').notNull(),
    count: integer('count').notNull().default(0),
    quota: quotaAmount('quota').notNull().default(0),
    /** Prompt plus completion tokens. */
    tokens: quotaAmount('tokens').notNull().default(0),
  },
  (t) => [
    uniqueIndex('uq_log_hours_user_name_model_hour').on(t.userId, t.username, t.modelName, t.createdAt),
    // Read for at most the 46 hours beside the whole days of a range: by time, the filters checked on each row.
    index('idx_log_hours_created_at').on(t.createdAt),
  ],
);

export type LogHour = typeof logHours.$inferSelect;
