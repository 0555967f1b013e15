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
