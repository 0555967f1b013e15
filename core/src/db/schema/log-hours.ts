import { bigserial, index, integer, pgTable, uniqueIndex, varchar } from 'drizzle-orm/pg-core';
import { quotaAmount, unixSeconds } from './columns.ts';

/**
 * Consume logs summed per hour and per every value the console's totals filter by (user, username, model, token
 * name, channel, group), for those totals (`/api/log/stat`). Kept by
 * triggers on `logs` (migration 0012): every insert, update, delete or truncate of consume logs changes it in the
 * same statement, so it always equals the sums over the logs themselves, whoever wrote or deleted them (the relay's
 * writer, a channel test, an import, retention). Unlike `quota_data`, which follows DataExportEnabled and is never
 * deleted. Never written by the application; `log_days` is the same a level up (docs/adr/0031).
 */
export const logHours = pgTable(
  'log_hours',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    userId: integer('user_id').notNull(),
    username: varchar('username', { length: 64 }).notNull(),
    modelName: varchar('model_name', { length: 255 }).notNull(),
    tokenName: varchar('token_name', { length: 64 }).notNull(),
    channelId: integer('channel_id').notNull(),
    group: varchar('group', { length: 64 }).notNull(),
    /** Start of the hour, Unix seconds. */
    createdAt: unixSeconds('created_at').notNull(),
    count: integer('count').notNull().default(0),
    quota: quotaAmount('quota').notNull().default(0),
    /** Prompt plus completion tokens. */
    tokens: quotaAmount('tokens').notNull().default(0),
  },
  (t) => [
    uniqueIndex('uq_log_hours_key').on(
      t.userId,
      t.username,
      t.modelName,
      t.tokenName,
      t.channelId,
      t.group,
      t.createdAt,
    ),
    index('idx_log_hours_username_created_at').on(t.username, t.createdAt),
    index('idx_log_hours_model_name_created_at').on(t.modelName.op('varchar_pattern_ops'), t.createdAt),
    index('idx_log_hours_channel_id_created_at').on(t.channelId, t.createdAt),
    index('idx_log_hours_created_at').on(t.createdAt),
  ],
);

export type LogHour = typeof logHours.$inferSelect;
