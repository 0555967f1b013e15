import { index, integer, pgTable, serial, varchar } from 'drizzle-orm/pg-core';
import { deletedAt, quotaAmount, unixSeconds } from './columns.ts';

export const redemptions = pgTable(
  'redemptions',
  {
    id: serial('id').primaryKey(),
    /** The admin who created it. */
    userId: integer('user_id').notNull().default(0),
    key: varchar('key', { length: 32 }).notNull().unique(),
    /** 1 unused, 2 disabled, 3 used. */
    status: integer('status').notNull().default(1),
    name: varchar('name', { length: 255 }).notNull().default(''),
    quota: quotaAmount('quota').notNull().default(100),
    createdTime: unixSeconds('created_time').notNull().default(0),
    redeemedTime: unixSeconds('redeemed_time').notNull().default(0),
    usedUserId: integer('used_user_id').notNull().default(0),
    deletedAt: deletedAt(),
  },
  (t) => [index('idx_redemptions_name').on(t.name), index('idx_redemptions_deleted_at').on(t.deletedAt)],
);

export type Redemption = typeof redemptions.$inferSelect;
export type NewRedemption = typeof redemptions.$inferInsert;
