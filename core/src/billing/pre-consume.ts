/**
 * Pre-consume (reference §5.3): before a request goes upstream, estimate what it may cost. The relay holds that
 * estimate on the ledger (ledger.ts, docs/adr/0016) until the request settles against its real usage (settle.ts);
 * this file only computes the amount.
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
