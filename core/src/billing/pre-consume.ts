/**
 * Pre-consume (reference §5.3): before a request goes upstream, estimate what it may cost and decide how much of
 * the user's and token's quota to reserve. The reservation is settled against the real usage afterwards
 * (settle.ts) and must be refunded on every exit path — that bookkeeping lives in the relay, this file only
 * computes amounts and decisions. See docs/adr/0006.
 */

import { truncateQuota } from './quota-math.ts';
import type { Pricing } from './ratios.ts';

export interface EstimateInput {
  readonly pricing: Pricing;
  /** Prompt tokens counted locally. */
  readonly promptTokens: number;
  /** The larger of `max_tokens` / `max_completion_tokens` / `max_output_tokens`, when the request names one. */
  readonly maxTokens?: number | undefined;
  /** The `PreConsumedQuota` option: tokens assumed when the request names no limit (default 500). */
  readonly preConsumedTokens: number;
  /** The `QuotaPerUnit` option (quota per USD). */
  readonly quotaPerUnit: number;
}

/**
 * The quota a request is expected to cost at most, as the reference estimates it:
 * per-token `int(tokens × modelRatio × groupRatio)` where tokens is `prompt + maxTokens` when the request names
 * a limit and `PreConsumedQuota` otherwise (the completion ratio is deliberately not applied: it is an estimate,
 * and the reservation is only a guard); per-call `int(modelPrice × QuotaPerUnit × groupRatio)`.
 */
export function estimateQuota(input: EstimateInput): number {
  const { pricing } = input;
  if (pricing.kind === 'per-call') {
    return truncateQuota(pricing.modelPrice * input.quotaPerUnit * pricing.groupRatio);
  }
  const tokens =
    input.maxTokens !== undefined && input.maxTokens > 0
      ? input.promptTokens + input.maxTokens
      : input.preConsumedTokens;
  return truncateQuota(tokens * pricing.modelRatio * pricing.groupRatio);
}

/** Balances as the relay sees them (its cache, minus what the batching writer has not flushed yet). */
export interface ReservationInput {
  readonly estimate: number;
  readonly userQuota: number;
  /** The token's balance; null for the console playground, which is billed to the user only. */
  readonly token: { readonly unlimited: boolean; readonly remainQuota: number } | null;
  /**
   * A balance at or above which a user (and token) is trusted and nothing is reserved. The reference's later
   * default is 10 × QuotaPerUnit ($10); pass Infinity to always reserve.
   */
  readonly trustQuota: number;
}

export type Reservation =
  | {
      readonly ok: true;
      /** Quota to take from the user (and the token) now; 0 when trusted. */
      readonly reserve: number;
      readonly trusted: boolean;
    }
  | {
      readonly ok: false;
      /** OpenAI-shape error code the relay answers with (HTTP 403, a local error that is never retried). */
      readonly code: 'insufficient_user_quota' | 'pre_consume_token_quota_failed';
      readonly message: string;
    };

/**
 * Decides the reservation (reference §5.3):
 * - user balance ≤ 0, or below the estimate → refused (`insufficient_user_quota`);
 * - token (not unlimited) balance below the estimate → refused (`pre_consume_token_quota_failed`);
 * - trust shortcut: nothing is reserved when the user's balance — and the token's, unless unlimited — is at
 *   least `max(trustQuota, 100 × estimate)`. The reference uses the 100× rule in its first version and a fixed
 *   $10 in later ones; requiring both keeps one expensive request from skipping the guard on a modest balance.
 *   Trust is safe for quota never going negative only because settlement is capped by the balance (settle.ts).
 */
export function decideReservation(input: ReservationInput): Reservation {
  const { estimate, userQuota, token } = input;
  if (userQuota <= 0 || userQuota < estimate) {
    return {
      ok: false,
      code: 'insufficient_user_quota',
      message: `user quota is not enough (needs ${estimate}, has ${Math.max(userQuota, 0)})`,
    };
  }
  if (token && !token.unlimited && token.remainQuota < estimate) {
    return {
      ok: false,
      code: 'pre_consume_token_quota_failed',
      message: `token quota is not enough (needs ${estimate}, has ${Math.max(token.remainQuota, 0)})`,
    };
  }
  const threshold = Math.max(input.trustQuota, 100 * estimate);
  const userTrusted = userQuota >= threshold;
  const tokenTrusted = token === null || token.unlimited || token.remainQuota >= threshold;
  if (userTrusted && tokenTrusted) return { ok: true, reserve: 0, trusted: true };
  return { ok: true, reserve: estimate, trusted: false };
}
