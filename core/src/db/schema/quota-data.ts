import { bigserial, index, integer, pgTable, uniqueIndex, varchar } from 'drizzle-orm/pg-core';
import { quotaAmount, unixSeconds } from './columns.ts';

/** Usage per user, model and hour for the dashboard; upserted by increment. */
export const quotaData = pgTable(
  'quota_data',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    userId: integer('user_id').notNull(),
    username: varchar('username', { length: 64 }).notNull().default(''),
    modelName: varchar('model_name', { length: 255 }).notNull().default(''),
    /** Start of the hour, Unix seconds. */
    createdAt: unixSeconds('created_at').notNull(),
    tokenUsed: quotaAmount('token_used').notNull().default(0),
    count: integer('count').notNull().default(0),
    quota: quotaAmount('quota').notNull().default(0),
  },
  (t) => [
    uniqueIndex('uq_quota_data_user_model_hour').on(t.userId, t.modelName, t.createdAt),
    index('idx_quota_data_created_at').on(t.createdAt),
    index('idx_quota_data_model_username').on(t.modelName, t.username),
  ],
);

export type QuotaData = typeof quotaData.$inferSelect;
export type NewQuotaData = typeof quotaData.$inferInsert;
