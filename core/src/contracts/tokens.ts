import { z } from 'zod';
import type { Token } from '../db/schema/tokens.ts';
import { displayTokenKey, NEVER_EXPIRES, parseAllowIps, TokenStatus } from '../domain/tokens.ts';
import { MAX_LIMIT } from '../options/limit-bound.ts';
import { PAGE_SIZE_DEFAULT, PAGE_SIZE_MAX } from './envelope.ts';
import { type QuotaWindowStateView, quotaWindowsField } from './quota-windows.ts';

export const TOKEN_NAME_MAX = 30;
export const MODEL_LIMITS_MAX = 1024;

/** Tokens page from `p` = 0 or 1 (both the first page, as the console's chat redirect sends 0) with `size`. */
export const tokenPageQuerySchema = z.object({
  p: z.coerce
    .number()
    .int()
    .catch(1)
    .default(1)
    .transform((p) => Math.max(p, 1)),
  size: z.coerce.number().int().min(1).max(PAGE_SIZE_MAX).catch(PAGE_SIZE_DEFAULT).default(PAGE_SIZE_DEFAULT),
});
export type TokenPageQuery = z.infer<typeof tokenPageQuerySchema>;

export const tokenSearchQuerySchema = tokenPageQuerySchema.extend({
  keyword: z.string().trim().max(TOKEN_NAME_MAX).catch('').default(''),
  token: z.string().trim().max(64).catch('').default(''),
});
export type TokenSearchQuery = z.infer<typeof tokenSearchQuerySchema>;

const quota = z
  .number({ error: 'remain_quota must be an integer' })
  .int('remain_quota must be an integer')
  .min(0, 'remain_quota cannot be negative')
  .max(Number.MAX_SAFE_INTEGER, 'remain_quota is too large');

const expiredTime = z
  .number({ error: 'expiry time format error' })
  .int('expiry time format error')
  .refine((t) => t === NEVER_EXPIRES || t > 0, 'expiry time format error')
  .refine((t) => t <= Number.MAX_SAFE_INTEGER, 'expiry time format error');

const allowIps = z
  .string({ error: 'allow_ips must be text' })
  .max(10_000, 'allow_ips is too long')
  .superRefine((text, ctx) => {
    const { invalid } = parseAllowIps(text);
    if (invalid.length > 0)
      ctx.addIssue({
        code: 'custom',
        message: `allow_ips: "${invalid[0]}" is not an IP address or CIDR range`,
      });
  });

/** A limit of the token (docs/adr/0028): a whole number of 0 or more, 0 being no limit. */
const limit = (field: string, what: string) =>
  z
    .number({ error: `${field} must be a whole number of ${what} (0 is no limit)` })
    .int(`${field} must be a whole number of ${what} (0 is no limit)`)
    .min(0, `${field} cannot be negative (0 is no limit)`)
    .max(MAX_LIMIT, `${field} is too large`);

const tokenFields = {
  name: z
    .string({ error: 'name is required' })
    .trim()
    .min(1, 'name is required')
    .max(TOKEN_NAME_MAX, `name must be at most ${TOKEN_NAME_MAX} characters`),
  remain_quota: quota,
  expired_time: expiredTime,
  unlimited_quota: z.boolean({ error: 'unlimited_quota must be true or false' }),
  model_limits_enabled: z.boolean({ error: 'model_limits_enabled must be true or false' }),
  model_limits: z
    .string({ error: 'model_limits must be a comma-separated list' })
    .max(MODEL_LIMITS_MAX, `model_limits must be at most ${MODEL_LIMITS_MAX} characters`),
  allow_ips: allowIps,
  group: z.string({ error: 'group must be text' }).trim().max(64, 'group must be at most 64 characters'),
  rpm_limit: limit('rpm_limit', 'requests per minute'),
  tpm_limit: limit('tpm_limit', 'tokens per minute'),
  concurrency_limit: limit('concurrency_limit', 'requests at a time'),
  /** Budgets that reset (docs/adr/0043); an edit without it keeps the token's windows. */
  quota_windows: quotaWindowsField,
};

export const createTokenSchema = z.object({
  name: tokenFields.name,
  remain_quota: tokenFields.remain_quota.optional().default(0),
  expired_time: tokenFields.expired_time.optional().default(NEVER_EXPIRES),
  unlimited_quota: tokenFields.unlimited_quota.optional().default(false),
  model_limits_enabled: tokenFields.model_limits_enabled.optional().default(false),
  model_limits: tokenFields.model_limits.optional().default(''),
  allow_ips: tokenFields.allow_ips.optional().default(''),
  group: tokenFields.group.optional().default(''),
  rpm_limit: tokenFields.rpm_limit.optional().default(0),
  tpm_limit: tokenFields.tpm_limit.optional().default(0),
  concurrency_limit: tokenFields.concurrency_limit.optional().default(0),
  quota_windows: tokenFields.quota_windows.optional().default([]),
});
export type CreateToken = z.infer<typeof createTokenSchema>;

const tokenId = z.number({ error: 'id is required' }).int('id must be an integer').positive('id is required');
const settableStatus = z.union([z.literal(TokenStatus.Enabled), z.literal(TokenStatus.Disabled)], {
  error: 'status must be 1 (enabled) or 2 (disabled)',
});

export const updateTokenSchema = z.object({
  id: tokenId,
  name: tokenFields.name.optional(),
  remain_quota: tokenFields.remain_quota.optional(),
  expired_time: tokenFields.expired_time.optional(),
  unlimited_quota: tokenFields.unlimited_quota.optional(),
  model_limits_enabled: tokenFields.model_limits_enabled.optional(),
  model_limits: tokenFields.model_limits.optional(),
  allow_ips: tokenFields.allow_ips.optional(),
  group: tokenFields.group.optional(),
  rpm_limit: tokenFields.rpm_limit.optional(),
  tpm_limit: tokenFields.tpm_limit.optional(),
  concurrency_limit: tokenFields.concurrency_limit.optional(),
  quota_windows: tokenFields.quota_windows.optional(),
  status: settableStatus.optional(),
});
export type UpdateToken = z.infer<typeof updateTokenSchema>;

export const tokenStatusSchema = z.object({ id: tokenId, status: settableStatus });
export type TokenStatusUpdate = z.infer<typeof tokenStatusSchema>;

/**
 * A token as its owner sees it; the key carries its `sk-` prefix, ready to copy. `windowStates`: what each of its
 * quota windows has spent (read from the database, so the caller brings them).
 */
export function toTokenView(token: Token, windowStates: QuotaWindowStateView[]) {
  return {
    id: token.id,
    user_id: token.userId,
    key: displayTokenKey(token.key),
    status: token.status,
    name: token.name,
    created_time: token.createdTime,
    accessed_time: token.accessedTime,
    expired_time: token.expiredTime,
    remain_quota: token.remainQuota,
    unlimited_quota: token.unlimitedQuota,
    model_limits_enabled: token.modelLimitsEnabled,
    model_limits: token.modelLimits,
    allow_ips: token.allowIps,
    used_quota: token.usedQuota,
    group: token.group,
    rpm_limit: token.rpmLimit,
    tpm_limit: token.tpmLimit,
    concurrency_limit: token.concurrencyLimit,
    quota_windows: token.quotaWindows,
    quota_window_states: windowStates,
  };
}
export type TokenView = ReturnType<typeof toTokenView>;
