import { z } from 'zod';

const amount = z
  .number({ error: 'amount must be a whole number' })
  .int('amount must be a whole number')
  .min(1, 'amount must be at least 1')
  .max(1_000_000_000_000, 'amount is too large');

/** `POST /api/user/amount`: the payable money for an amount (units, or quota when currency display is off). */
export const topUpAmountSchema = z.object({
  amount,
  top_up_code: z.string().trim().max(64).optional().default(''),
});
export type TopUpAmount = z.infer<typeof topUpAmountSchema>;

export const PaymentMethod = ['zfb', 'wx', 'alipay', 'wxpay', 'qqpay'] as const;

/** `POST /api/user/pay`: start an online top-up. */
export const payRequestSchema = topUpAmountSchema.extend({
  payment_method: z.enum(PaymentMethod, {
    error: `payment_method must be one of ${PaymentMethod.join(', ')}`,
  }),
});
export type PayRequest = z.infer<typeof payRequestSchema>;

export const TopUpStatus = { Pending: 'pending', Success: 'success', Failed: 'failed' } as const;
export type TopUpStatus = (typeof TopUpStatus)[keyof typeof TopUpStatus];
