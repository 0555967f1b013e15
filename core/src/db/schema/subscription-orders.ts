import { doublePrecision, index, integer, pgTable, serial, text, varchar } from 'drizzle-orm/pg-core';
import { unixSeconds } from './columns.ts';

/**
 * Orders for plans (the reference's `subscription_orders`): made `pending` when the buyer is sent to pay, completed
 * once by the payment provider's signed callback (`success`), or `expired` when the provider says the checkout
 * ended unpaid. The unique `trade_no` and the conditional move out of `pending` make a replayed callback a no-op.
 */
export const subscriptionOrders = pgTable(
  'subscription_orders',
  {
    id: serial('id').primaryKey(),
    userId: integer('user_id').notNull(),
    planId: integer('plan_id').notNull(),
    /** Money to pay, in `currency`. */
    money: doublePrecision('money').notNull().default(0),
    currency: varchar('currency', { length: 8 }).notNull().default('USD'),
    tradeNo: varchar('trade_no', { length: 255 }).notNull().unique(),
    /** `stripe`, `creem`, or the Epay channel (`alipay`, `wxpay`, ...). */
    paymentMethod: varchar('payment_method', { length: 50 }).notNull().default(''),
    status: varchar('status', { length: 20 }).notNull().default('pending'),
    createTime: unixSeconds('create_time').notNull().default(0),
    completeTime: unixSeconds('complete_time').notNull().default(0),
    /** The provider's id of the payment (a Checkout Session id), for support. */
    providerRef: varchar('provider_ref', { length: 255 }).notNull().default(''),
    /** The subscription the order made. */
    userSubscriptionId: integer('user_subscription_id').notNull().default(0),
    providerPayload: text('provider_payload').notNull().default(''),
  },
  (t) => [index('idx_subscription_orders_user_id').on(t.userId)],
);

export type SubscriptionOrder = typeof subscriptionOrders.$inferSelect;
export type NewSubscriptionOrder = typeof subscriptionOrders.$inferInsert;
