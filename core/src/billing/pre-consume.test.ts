import { describe, expect, it } from 'vitest';
import { estimateQuota } from './pre-consume.ts';
import type { Pricing } from './ratios.ts';

const QUOTA_PER_UNIT = 500_000;
const perToken = (modelRatio: number, groupRatio = 1): Pricing => ({
  kind: 'per-token',
  model: 'm',
  modelRatio,
  completionRatio: 4,
  cacheRatio: 1,
  cacheCreationRatio: 1.25,
  cacheCreation1hRatio: 2,
  groupRatio,
  isUnsetRatio: false,
});
const perCall = (modelPrice: number, groupRatio = 1): Pricing => ({
  kind: 'per-call',
  model: 'm',
  modelPrice,
  groupRatio,
});

describe('estimateQuota', () => {
  it.each([
    // [case, pricing, prompt, maxTokens, expected]
    ['no max_tokens: PreConsumedQuota tokens × ratio (500 × 1.25)', perToken(1.25), 100, undefined, 625],
    ['max_tokens: (prompt + max) × ratio × group (1100 × 0.075 × 0.8)', perToken(0.075, 0.8), 100, 1000, 66],
    ['truncated, not rounded (13 × 0.25 = 3.25)', perToken(0.25), 10, 3, 3],
    ['max_tokens 0 counts as not given', perToken(1), 100, 0, 500],
    ['completion ratio not applied (110 × 1)', perToken(1), 10, 100, 110],
    ['per call: 0.04 USD × 500000', perCall(0.04), 100, 1000, 20_000],
    ['per call with group ratio: 0.1 × 500000 × 1.5', perCall(0.1, 1.5), 0, undefined, 75_000],
    ['free model', perToken(0), 100, 1000, 0],
  ])('%s', (_case, pricing, promptTokens, maxTokens, expected) => {
    expect(
      estimateQuota({
        pricing,
        promptTokens,
        maxTokens,
        preConsumedTokens: 500,
        quotaPerUnit: QUOTA_PER_UNIT,
      }),
    ).toBe(expected);
  });
});

describe('estimateQuota with the price shapes', () => {
  // Claude Sonnet 4.5: ratio 1.5 ($3 input); past 200K prompt tokens input × 2, output × 1.5
  // (https://docs.anthropic.com/en/docs/about-claude/pricing, long context pricing).
  const sonnet: Pricing = {
    ...(perToken(1.5) as Extract<Pricing, { kind: 'per-token' }>),
    completionRatio: 5,
    shapes: {
      longContextTiers: [{ above: 200_000, input: 2, output: 1.5 }],
      serviceTiers: { priority: 2, flex: 0.5 },
    },
  };
  const estimate = (promptTokens: number, maxTokens?: number, serviceTier?: string) =>
    estimateQuota({
      pricing: sonnet,
      promptTokens,
      maxTokens,
      preConsumedTokens: 500,
      quotaPerUnit: QUOTA_PER_UNIT,
      serviceTier,
    });

  it.each([
    ['a short prompt as before: (100000 + 1000) × 1.5', 100_000, 1000, undefined, 151_500],
    ['a 250k prompt at the tier: (250000 × 2 + 1000 × 1.5) × 1.5', 250_000, 1000, undefined, 752_250],
    [
      'a 250k prompt naming no limit holds the prompt too: (250000 × 2 + 500 × 1.5) × 1.5',
      250_000,
      undefined,
      undefined,
      751_125,
    ],
    ['a short prompt naming no limit: 500 × 1.5', 100_000, undefined, undefined, 750],
    ['priority asked: (1000 + 1000) × 1.5 × 2', 1000, 1000, 'priority', 6000],
    ['flex asked is held at the standard price: (1000 + 1000) × 1.5', 1000, 1000, 'flex', 3000],
    ['a tier it has no multiplier for: (1000 + 1000) × 1.5', 1000, 1000, 'auto', 3000],
  ])('%s', (_case, prompt, max, tier, expected) => {
    expect(estimate(prompt, max, tier)).toBe(expected);
  });
});
