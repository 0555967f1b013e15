import { z } from 'zod';
import { PLAN_DURATION_UNITS, PLAN_RESET_PERIODS } from '../domain/closed-sets.ts';
import { PaymentMethod } from './wallet.ts';

/** A group name a plan moves its buyers to; empty: none. */
const group = z.string().trim().max(64, 'upgrade_group is at most 64 characters');

/**
 * A plan as an administrator saves it (`POST /api/subscription/admin/plans`, `PUT …/plans/:id`), in the reference's
 * field names, wrapped as `{ plan: {…} }` as the reference's console sends it.
 */
export const planInputSchema = z
  .object({
    title: z.string().trim().min(1, 'title must not be empty').max(128, 'title is at most 128 characters'),
    subtitle: z.string().trim().max(255, 'subtitle is at most 255 characters').default(''),
    price_amount: z
      .number({ error: 'price_amount must be a number' })
      .min(0, 'price_amount must not be negative')
      .max(1_000_000, 'price_amount is too large'),
    currency: z
      .string()
      .trim()
      .regex(/^[A-Za-z]{3}$/, 'currency must be a three-letter code such as USD')
      .default('USD')
      .transform((c) => c.toUpperCase()),
    duration_unit: z.enum(PLAN_DURATION_UNITS, {
      error: `duration_unit must be one of ${PLAN_DURATION_UNITS.join(', ')}`,
    }),
    duration_value: z.number().int('duration_value must be a whole number').min(0).max(100_000).default(1),
    custom_seconds: z.number().int('custom_seconds must be a whole number').min(0).default(0),
    enabled: z.boolean().default(true),
    sort_order: z.number().int().default(0),
    stripe_price_id: z.string().trim().max(128).default(''),
    creem_product_id: z.string().trim().max(128).default(''),
    max_purchase_per_user: z.number().int().min(0, 'max_purchase_per_user must not be negative').default(0),
    upgrade_group: group.default(''),
    total_amount: z
      .number()
      .int('total_amount must be a whole number')
      .min(0)
      .max(2 ** 49)
      .default(0),
    quota_reset_period: z
      .enum(PLAN_RESET_PERIODS, {
        error: `quota_reset_period must be one of ${PLAN_RESET_PERIODS.join(', ')}`,
      })
      .default('never'),
    quota_reset_custom_seconds: z.number().int().min(0).default(0),
  })
  .refine((p) => p.duration_unit === 'custom' || p.duration_value > 0, {
    message: 'duration_value must be 1 or more',
  })
  .refine((p) => p.duration_unit !== 'custom' || p.custom_seconds >= 60, {
    message: 'a custom duration needs custom_seconds of 60 or more',
  })
  .refine((p) => p.quota_reset_period !== 'custom' || p.quota_reset_custom_seconds >= 60, {
    message: 'a custom reset period needs quota_reset_custom_seconds of 60 or more',
  });
export type PlanInput = z.infer<typeof planInputSchema>;

export const planBodySchema = z.object({ plan: planInputSchema });

/** `PATCH /api/subscription/admin/plans/:id`: turns a plan on or off for new buyers. */
export const planStatusSchema = z.object({ enabled: z.boolean({ error: 'enabled must be true or false' }) });

const planId = z.number({ error: 'plan_id must be a number' }).int().positive('plan_id must be a plan');

/** `POST /api/subscription/stripe/pay`, `…/creem/pay`. */
export const planPaySchema = z.object({ plan_id: planId });

/** `POST /api/subscription/epay/pay`. */
export const planEpaySchema = z.object({
  plan_id: planId,
  payment_method: z.enum(PaymentMethod, {
    error: `payment_method must be one of ${PaymentMethod.join(', ')}`,
  }),
});

/** `POST /api/subscription/admin/bind` (and `…/users/:id/subscriptions` with the user in the path). */
export const planBindSchema = z.object({
  user_id: z.number().int().positive('user_id must be a user').optional(),
  plan_id: planId,
});

/** Which pays first; the allowance always does here (docs/adr/0049), so only that is accepted. */
export const BILLING_PREFERENCES = ['subscription_first'] as const;
export const billingPreferenceSchema = z.object({
  billing_preference: z.enum(BILLING_PREFERENCES, {
    error: 'only "subscription_first" is offered: a plan\'s allowance always pays before the wallet',
  }),
});

/** A plan on the wire (the reference's fields). */
export interface PlanView {
  id: number;
  title: string;
  subtitle: string;
  price_amount: number;
  currency: string;
  duration_unit: string;
  duration_value: number;
  custom_seconds: number;
  enabled: boolean;
  sort_order: number;
  stripe_price_id: string;
  creem_product_id: string;
  max_purchase_per_user: number;
  upgrade_group: string;
  total_amount: number;
  quota_reset_period: string;
  quota_reset_custom_seconds: number;
  created_at: number;
  updated_at: number;
}

/** A user's subscription on the wire (the reference's fields, its allowance's use in the current period). */
export interface SubscriptionViewWire {
  id: number;
  user_id: number;
  plan_id: number;
  plan_title: string;
  amount_total: number;
  amount_used: number;
  start_time: number;
  end_time: number;
  status: string;
  source: string;
  last_reset_time: number;
  next_reset_time: number;
  upgrade_group: string;
  prev_user_group: string;
  quota_reset_period: string;
}
