import { z } from 'zod';
import type { Redemption } from '../db/schema/redemptions.ts';
import { RedemptionStatus } from '../domain/redemptions.ts';
import { pageQuerySchema } from './envelope.ts';

export const REDEMPTION_NAME_MAX = 20;
export const REDEMPTION_COUNT_MAX = 100;

export const redemptionSearchQuerySchema = pageQuerySchema.extend({
  keyword: z.string().trim().max(255).catch('').default(''),
});
export type RedemptionSearchQuery = z.infer<typeof redemptionSearchQuerySchema>;

const name = z
  .string({ error: 'name is required' })
  .trim()
  .min(1, 'name is required')
  .max(REDEMPTION_NAME_MAX, `name must be 1 to ${REDEMPTION_NAME_MAX} characters`);
const quota = z
  .number({ error: 'quota must be an integer' })
  .int('quota must be an integer')
  .positive('quota must be greater than 0')
  .max(Number.MAX_SAFE_INTEGER, 'quota is too large');
const id = z.number({ error: 'id is required' }).int('id must be an integer').positive('id is required');
const settableStatus = z.union([z.literal(RedemptionStatus.Unused), z.literal(RedemptionStatus.Disabled)], {
  error: 'status must be 1 (enabled) or 2 (disabled)',
});

export const createRedemptionSchema = z.object({
  name,
  quota,
  count: z
    .number({ error: 'count must be an integer' })
    .int('count must be an integer')
    .min(1, `count must be 1 to ${REDEMPTION_COUNT_MAX}`)
    .max(REDEMPTION_COUNT_MAX, `count must be 1 to ${REDEMPTION_COUNT_MAX}`)
    .optional()
    .default(1),
});
export type CreateRedemption = z.infer<typeof createRedemptionSchema>;

export const updateRedemptionSchema = z.object({
  id,
  name: name.optional(),
  quota: quota.optional(),
  status: settableStatus.optional(),
});
export type UpdateRedemption = z.infer<typeof updateRedemptionSchema>;

export const redemptionStatusSchema = z.object({ id, status: settableStatus });

export const redeemSchema = z.object({
  key: z
    .string({ error: 'please enter the redemption code!' })
    .trim()
    .min(1, 'please enter the redemption code!')
    .max(64, 'invalid redemption code'),
});
export type Redeem = z.infer<typeof redeemSchema>;

export function toRedemptionView(row: Redemption) {
  return {
    id: row.id,
    user_id: row.userId,
    key: row.key,
    status: row.status,
    name: row.name,
    quota: row.quota,
    created_time: row.createdTime,
    redeemed_time: row.redeemedTime,
    used_user_id: row.usedUserId,
  };
}
export type RedemptionView = ReturnType<typeof toRedemptionView>;
