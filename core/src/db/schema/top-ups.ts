import { doublePrecision, index, integer, pgTable, serial, varchar } from 'drizzle-orm/pg-core';
import { unixSeconds } from './columns.ts';

/** Online payment orders. Status: pending -> success | failed. */
export const topUps = pgTable(
  'top_ups',
  {
    id: serial('id').primaryKey(),
    userId: integer('user_id').notNull(),
    /** Units bought (dollars when displayed in currency). */
    amount: integer('amount').notNull().default(0),
    /** Money paid, in the payment provider's currency. */
    money: doublePrecision('money').notNull().default(0),
    tradeNo: varchar('trade_no', { length: 255 }).notNull().unique(),
    paymentMethod: varchar('payment_method', { length: 50 }).notNull().default(''),
    createTime: unixSeconds('create_time').notNull().default(0),
    completeTime: unixSeconds('complete_time').notNull().default(0),
    status: varchar('status', { length: 20 }).notNull().default('pending'),
  },
  (t) => [index('idx_top_ups_user_id').on(t.userId)],
);

export type TopUp = typeof topUps.$inferSelect;
export type NewTopUp = typeof topUps.$inferInsert;
