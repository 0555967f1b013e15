import { bigserial, index, integer, pgTable, uniqueIndex, varchar } from 'drizzle-orm/pg-core';
import { quotaAmount, unixSeconds } from './columns.ts';

/**
 * Consume logs summed per UTC day and per every value the console's totals filter by (user, username, model, token
 * name, channel, group), kept by the same triggers as `log_hours` (migration 0012): a total over months reads a row
 * per day and combination instead of the logs (docs/adr/0031).
 */
export const logDays = pgTable(
  'log_days',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    userId: integer('user_id').notNull(),
    username: varchar('username', { length: 64 }).notNull(),
    modelName: varchar('model_name', { length: 255 }).notNull(),
    tokenName: varchar('token_name', { length: 64 }).notNull(),
    channelId: integer('channel_id').notNull(),
    group: varchar('group', { length: 64 }).notNull(),
    /** Start of the UTC day, Unix seconds. */
    createdAt: unixSeconds('created_at').notNull(),
    count: integer('count').notNull().default(0),
    quota: quotaAmount('quota').notNull().default(0),
    /** Prompt plus completion tokens. */
    tokens: quotaAmount('tokens').notNull().default(0),
  },
  (t) => [
    uniqueIndex('uq_log_days_key').on(
      t.userId,
      t.username,
      t.modelName,
      t.tokenName,
      t.channelId,
      t.group,
      t.createdAt,
    ),
    index('idx_log_days_username_created_at').on(t.username, t.createdAt),
    index('idx_log_days_model_name_created_at').on(t.modelName.op('varchar_pattern_ops'), t.createdAt),
    index('idx_log_days_channel_id_created_at').on(t.channelId, t.createdAt),
    index('idx_log_days_created_at').on(t.createdAt),
  ],
);

export type LogDay = typeof logDays.$inferSelect;
