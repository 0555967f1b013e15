/**
 * Pre-consume (reference §5.3): before a request goes upstream, estimate what it may cost. The relay holds that
 * estimate on the ledger (ledger.ts, docs/adr/0016) until the request settles against its real usage (settle.ts);
 * this file only computes the amount.
 */

import { truncateQuota } from './quota-math.ts';
import type { Pricing } from './ratios.ts';
import { longContextTierOf, serviceTierRatioOf } from './settle.ts';

export interface EstimateInput {
  readonly pricing: Pricing;
  /**
   * Prompt tokens counted locally: read when the request names its output limit, and for a model with long-context
   * tiers (the tier the prompt reaches decides the price of the whole call).
   */
  readonly promptTokens: number;
  /** The larger of `max_tokens` / `max_completion_tokens` / `max_output_tokens`, when the request names one. */
  readonly maxTokens?: number | undefined;
  /** The `PreConsumedQuota` option: tokens assumed when the request names no limit (default 500). */
  readonly preConsumedTokens: number;
  /** The `QuotaPerUnit` option (quota per USD). */
  readonly quotaPerUnit: number;
  /** The service tier the request asks for (`service_tier`); held at its multiplier when that is above 1. */
  readonly serviceTier?: string | undefined;
}

/**
 * The quota a request is expected to cost at most, as the reference estimates it:
 * per-token `int(tokens × modelRatio × groupRatio)` where tokens is `prompt + maxTokens` when the request names
 * a limit and `PreConsumedQuota` otherwise (the completion ratio is deliberately not applied: it is an estimate,
 * and the reservation is only a guard); per-call `int(modelPrice × QuotaPerUnit × groupRatio)`.
 *
 * With the price shapes (docs/adr/0042) the estimate is held at the price the call will be billed at, so a long
 * call cannot overdraw a balance a short-context estimate admitted:
 * - a prompt past a long-context tier counts at the tier's input multiplier and the output (the limit, or
 *   `PreConsumedQuota` when none is named: the prompt is then held too, since its size is known) at its output one;
 * - a requested service tier that costs more than the standard one (`priority`) multiplies the estimate; one that
 *   costs less (`flex`) does not lower it, as the answer may be served at another tier than asked.
 * Fees are not estimated: how many searches a call runs is the model's choice.
 */
export function estimateQuota(input: EstimateInput): number {
  const { pricing } = input;
  if (pricing.kind === 'per-call') {
    return truncateQuota(pricing.modelPrice * input.quotaPerUnit * pricing.groupRatio);
  }
  const tier = longContextTierOf(pricing.shapes?.longContextTiers, input.promptTokens);
  const inM = tier?.input ?? 1;
  const outM = tier?.output ?? 1;
  const serviceTierRatio = Math.max(
    serviceTierRatioOf(pricing.shapes?.serviceTiers, input.serviceTier) ?? 1,
    1,
  );
  const tokens =
    input.maxTokens !== undefined && input.maxTokens > 0
      ? input.promptTokens * inM + input.maxTokens * outM
      : tier !== undefined
        ? input.promptTokens * inM + input.preConsumedTokens * outM
        : input.preConsumedTokens;
  return truncateQuota(tokens * pricing.modelRatio * serviceTierRatio * pricing.groupRatio);
}
