import { boolean, doublePrecision, integer, pgTable, serial, varchar } from 'drizzle-orm/pg-core';
import { quotaAmount, unixSeconds } from './columns.ts';

/**
 * Subscription plans an administrator sells (the reference's `subscription_plans`, docs/adr/0049): a price, how long
 * a subscription lasts (`duration_unit` × `duration_value`, or `custom_seconds`), the allowance it grants
 * (`total_amount` quota per reset period: `never` is once for the whole term) and the group it moves its buyer to.
 */
export const subscriptionPlans = pgTable('subscription_plans', {
  id: serial('id').primaryKey(),
  title: varchar('title', { length: 128 }).notNull(),
  subtitle: varchar('subtitle', { length: 255 }).notNull().default(''),
  /** Money to pay, in `currency`. */
  priceAmount: doublePrecision('price_amount').notNull().default(0),
  currency: varchar('currency', { length: 8 }).notNull().default('USD'),
  /** `year`, `month`, `day`, `hour` or `custom` (then `custom_seconds`). */
  durationUnit: varchar('duration_unit', { length: 16 }).notNull().default('month'),
  durationValue: integer('duration_value').notNull().default(1),
  customSeconds: unixSeconds('custom_seconds').notNull().default(0),
  enabled: boolean('enabled').notNull().default(true),
  sortOrder: integer('sort_order').notNull().default(0),
  /** A Stripe Price to charge instead of an amount made from `price_amount`. */
  stripePriceId: varchar('stripe_price_id', { length: 128 }).notNull().default(''),
  /** The Creem product sold for this plan (Creem prices live on its products). */
  creemProductId: varchar('creem_product_id', { length: 128 }).notNull().default(''),
  /** How many subscriptions of this plan one user may buy in all; 0: no limit. */
  maxPurchasePerUser: integer('max_purchase_per_user').notNull().default(0),
  /** The group a subscriber is moved to while the subscription lasts; empty: the user's group stays. */
  upgradeGroup: varchar('upgrade_group', { length: 64 }).notNull().default(''),
  /** Quota the allowance holds per reset period; 0: calls are not limited by the allowance (all paid by it). */
  totalAmount: quotaAmount('total_amount').notNull().default(0),
  /** `never`, `daily`, `weekly`, `monthly` or `custom` (then `quota_reset_custom_seconds`). */
  quotaResetPeriod: varchar('quota_reset_period', { length: 16 }).notNull().default('never'),
  quotaResetCustomSeconds: unixSeconds('quota_reset_custom_seconds').notNull().default(0),
  createdAt: unixSeconds('created_at').notNull().default(0),
  updatedAt: unixSeconds('updated_at').notNull().default(0),
});

export type SubscriptionPlan = typeof subscriptionPlans.$inferSelect;
export type NewSubscriptionPlan = typeof subscriptionPlans.$inferInsert;
