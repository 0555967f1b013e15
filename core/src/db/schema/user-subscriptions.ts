import { index, integer, pgTable, serial, varchar } from 'drizzle-orm/pg-core';
import { quotaAmount, unixSeconds } from './columns.ts';

/**
 * A plan a user holds (the reference's `user_subscriptions`, docs/adr/0049). The allowance's terms are copied from
 * the plan when it is bought, so a plan edited later changes nothing already sold. What the allowance spent is kept
 * like a quota window's, in `quota_window_usage` under the key `p:<id>|quota:<period>`, one slot per reset period.
 */
export const userSubscriptions = pgTable(
  'user_subscriptions',
  {
    id: serial('id').primaryKey(),
    userId: integer('user_id').notNull(),
    planId: integer('plan_id').notNull(),
    /** Quota per reset period (0: unlimited). */
    amountTotal: quotaAmount('amount_total').notNull().default(0),
    quotaResetPeriod: varchar('quota_reset_period', { length: 16 }).notNull().default('never'),
    quotaResetCustomSeconds: unixSeconds('quota_reset_custom_seconds').notNull().default(0),
    startTime: unixSeconds('start_time').notNull().default(0),
    endTime: unixSeconds('end_time').notNull().default(0),
    /** `active`, `expired` or `cancelled`. */
    status: varchar('status', { length: 32 }).notNull().default('active'),
    /** `order` (bought), `admin` (granted) or `import`. */
    source: varchar('source', { length: 32 }).notNull().default('order'),
    /** The group the plan moved the user to, and the group it moved them from (restored at the end). */
    upgradeGroup: varchar('upgrade_group', { length: 64 }).notNull().default(''),
    prevUserGroup: varchar('prev_user_group', { length: 64 }).notNull().default(''),
    createdAt: unixSeconds('created_at').notNull().default(0),
    updatedAt: unixSeconds('updated_at').notNull().default(0),
  },
  (t) => [
    index('idx_user_subscriptions_user_id').on(t.userId),
    index('idx_user_subscriptions_status_end').on(t.status, t.endTime),
  ],
);

export type UserSubscription = typeof userSubscriptions.$inferSelect;
export type NewUserSubscription = typeof userSubscriptions.$inferInsert;
