import { integer, pgTable, serial, uniqueIndex, varchar } from 'drizzle-orm/pg-core';
import { quotaAmount, unixSeconds } from './columns.ts';

/**
 * Daily check-ins (the reference's `checkins`): one row per user and day, the day in `QuotaWindowTimeZone`. The
 * unique index is what makes a check-in once a day however many requests race for it.
 */
export const checkins = pgTable(
  'checkins',
  {
    id: serial('id').primaryKey(),
    userId: integer('user_id').notNull(),
    /** `YYYY-MM-DD`. */
    checkinDate: varchar('checkin_date', { length: 10 }).notNull(),
    quotaAwarded: quotaAmount('quota_awarded').notNull(),
    createdAt: unixSeconds('created_at').notNull(),
  },
  // Also the index of a user's history (user_id first).
  (t) => [uniqueIndex('idx_user_checkin_date').on(t.userId, t.checkinDate)],
);

export type Checkin = typeof checkins.$inferSelect;
export type NewCheckin = typeof checkins.$inferInsert;
