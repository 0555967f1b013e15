import { describe, expect, it } from 'vitest';
import type { Pricing } from './ratios.ts';
import { settleBatchTokens, settleTokens } from './settle.ts';

const QUOTA_PER_UNIT = 500_000;
/** Quota of a USD amount. */
const usd = (dollars: number) => Math.round(dollars * QUOTA_PER_UNIT);

/** A per-token model priced in USD per million tokens (a model ratio of 1 is USD 2 per million input tokens). */
function perMillion(
  model: string,
  input: number,
  output: number,
  serviceTiers?: Record<string, number>,
): Pricing {
  return {
    kind: 'per-token',
    model,
    modelRatio: input / 2,
    completionRatio: output / input,
    cacheRatio: 0.5,
    cacheCreationRatio: 1.25,
    cacheCreation1hRatio: 2,
    groupRatio: 1,
    isUnsetRatio: false,
    ...(serviceTiers ? { shapes: { serviceTiers } } : {}),
  };
}

const MILLION = { promptTokens: 1_000_000, completionTokens: 1_000_000 };

describe('the batch price', () => {
  it("bills gpt-4o-mini at OpenAI's Batch API price: $0.075 input and $0.30 output per million", () => {
    // openai.com/api/pricing: gpt-4o-mini $0.15 / $0.60 per 1M tokens; Batch API $0.075 / $0.30.
    const pricing = perMillion('gpt-4o-mini', 0.15, 0.6);
    expect(settleTokens(pricing, MILLION, QUOTA_PER_UNIT).quota).toBe(usd(0.15 + 0.6));
    expect(settleBatchTokens(pricing, MILLION, QUOTA_PER_UNIT).quota).toBe(usd(0.075 + 0.3));
  });

  it("bills Claude Sonnet 4.5 at Anthropic's batch price: $1.50 input and $7.50 output per million", () => {
    // docs.anthropic.com pricing: Claude Sonnet 4.5 $3 / $15 per MTok; Batch processing $1.50 / $7.50.
    const pricing = perMillion('claude-sonnet-4-5', 3, 15);
    expect(settleBatchTokens(pricing, MILLION, QUOTA_PER_UNIT).quota).toBe(usd(1.5 + 7.5));
  });

  it("takes an operator's own batch multiplier from ServiceTierRatio, and ignores the tier the answer reports", () => {
    const pricing = perMillion('gpt-4o-mini', 0.15, 0.6, { batch: 0.25, priority: 2 });
    const usage = { ...MILLION, serviceTier: 'priority' };
    expect(settleBatchTokens(pricing, usage, QUOTA_PER_UNIT).quota).toBe(usd((0.15 + 0.6) / 4));
  });

  it('halves a per-call price', () => {
    const pricing: Pricing = { kind: 'per-call', model: 'x', modelPrice: 0.02, groupRatio: 1 };
    expect(settleBatchTokens(pricing, MILLION, QUOTA_PER_UNIT).quota).toBe(usd(0.01));
  });
});
