/**
 * End-to-end billing cases: price lookup (with model mapping and groups) → pre-consume estimate → settlement.
 * Every expected number is worked out by hand in the row; the `reference` column is what the reference's
 * formulas give where they differ (docs/adr/0006-billing-fixes.md).
 */
import { describe, expect, it } from 'vitest';
import { estimateQuota } from './pre-consume.ts';
import { isPricingRefusal, type PriceTables, resolvePricing } from './ratios.ts';
import { settleTokens, type TokenUsage } from './settle.ts';

const QPU = 500_000;
const tables: PriceTables = {
  modelRatio: {
    'gpt-4o': 1.25,
    'gpt-4o-mini': 0.075,
    'claude-3-5-sonnet': 1.5,
    'text-embedding-3-small': 0.01,
  },
  completionRatio: { 'gpt-4o': 4, 'gpt-4o-mini': 4, 'claude-3-5-sonnet': 5 },
  cacheRatio: { 'gpt-4o': 0.5, 'claude-3-5-sonnet': 0.1 },
  modelPrice: { 'dall-e-3': 0.04, 'gpt-4-gizmo-*': 0.1 },
  groupRatio: { default: 1, vip: 0.8, free: 0 },
};

interface Case {
  readonly name: string;
  /** What the client asked for: billing uses this name. */
  readonly requested: string;
  /** What the channel's model_mapping sent upstream (logged, never billed). */
  readonly upstream: string;
  readonly group: string;
  readonly usage: TokenUsage;
  readonly maxTokens?: number;
  readonly estimate: number;
  readonly quota: number;
  /** The reference's result where it differs. */
  readonly reference?: number;
}

const cases: Case[] = [
  {
    name: 'plain gpt-4o: (1000 + 500 × 4) × 1.25 = 3750; estimate (1000 + 1000) × 1.25 = 2500',
    requested: 'gpt-4o',
    upstream: 'gpt-4o',
    group: 'default',
    usage: { promptTokens: 1000, completionTokens: 500 },
    maxTokens: 1000,
    estimate: 2500,
    quota: 3750,
  },
  {
    name: 'cache read: (600 + 400 × 0.5 + 100 × 4) × 1.25 = 1500; estimate PreConsumedQuota 500 × 1.25 = 625',
    requested: 'gpt-4o',
    upstream: 'gpt-4o',
    group: 'default',
    usage: { promptTokens: 1000, completionTokens: 100, cachedTokens: 400 },
    estimate: 625,
    quota: 1500,
  },
  {
    name: 'Claude via chat with cache read 1000 + write 2000: (100 + 100 + 2500 + 1000) × 1.5 = 5550',
    requested: 'claude-3-5-sonnet',
    upstream: 'claude-3-5-sonnet',
    group: 'default',
    usage: { promptTokens: 3100, completionTokens: 200, cachedTokens: 1000, cacheWriteTokens: 2000 },
    estimate: 750,
    quota: 5550,
    // prompt = input_tokens 100, cached 1000: (100 − 1000 + 1000 × 0.1 + 200 × 5) × 1.5, write dropped
    reference: 300,
  },
  {
    name: 'group vip 0.8: (1000 + 500 × 4) × 1.25 × 0.8 = 3000',
    requested: 'gpt-4o',
    upstream: 'gpt-4o',
    group: 'vip',
    usage: { promptTokens: 1000, completionTokens: 500 },
    estimate: 500,
    quota: 3000,
  },
  {
    name: 'free group: 0, and no minimum',
    requested: 'gpt-4o',
    upstream: 'gpt-4o',
    group: 'free',
    usage: { promptTokens: 1000, completionTokens: 500 },
    estimate: 0,
    quota: 0,
  },
  {
    name: 'mapping gpt-4o → gpt-4o-mini bills gpt-4o (requested): 3750, not mini (1000 + 2000) × 0.075 = 225',
    requested: 'gpt-4o',
    upstream: 'gpt-4o-mini',
    group: 'default',
    usage: { promptTokens: 1000, completionTokens: 500 },
    estimate: 625,
    quota: 3750,
  },
  {
    name: 'per-call dall-e-3 × vip: 0.04 × 500000 × 0.8 = 16000',
    requested: 'dall-e-3',
    upstream: 'dall-e-3',
    group: 'vip',
    usage: { promptTokens: 1, completionTokens: 0 },
    estimate: 16_000,
    quota: 16_000,
  },
  {
    name: 'per-call custom GPT under the gizmo price: 0.1 × 500000 = 50000',
    requested: 'gpt-4-gizmo-g-abc',
    upstream: 'gpt-4-gizmo-g-abc',
    group: 'default',
    usage: { promptTokens: 20, completionTokens: 20 },
    estimate: 50_000,
    quota: 50_000,
  },
  {
    name: 'embeddings: 1000 × 0.01 = 10',
    requested: 'text-embedding-3-small',
    upstream: 'text-embedding-3-small',
    group: 'default',
    usage: { promptTokens: 1000, completionTokens: 0 },
    estimate: 5,
    quota: 10,
  },
  {
    name: 'minimum 1: 3 × 0.075 = 0.225 → 1',
    requested: 'gpt-4o-mini',
    upstream: 'gpt-4o-mini',
    group: 'default',
    usage: { promptTokens: 3, completionTokens: 0 },
    estimate: 37,
    quota: 1,
  },
];

/** The reference's text formula with its cache semantics (cached subtracted from an already-exclusive prompt). */
function referenceClaudeViaChat(): number {
  const input = 100;
  const cacheRead = 1000;
  return Math.round((input - cacheRead + cacheRead * 0.1 + 200 * 5) * 1.5);
}

describe('billing cases', () => {
  it.each(cases)('$name', (c) => {
    const pricing = resolvePricing({
      tables,
      model: c.requested,
      group: c.group,
      selfUseMode: false,
      acceptUnsetModelRatio: false,
    });
    if (isPricingRefusal(pricing)) throw new Error(pricing.message);
    expect(pricing.model).toBe(c.requested);
    const estimate = estimateQuota({
      pricing,
      promptTokens: c.usage.promptTokens,
      maxTokens: c.maxTokens,
      preConsumedTokens: 500,
      quotaPerUnit: QPU,
    });
    expect(estimate).toBe(c.estimate);
    expect(settleTokens(pricing, c.usage, QPU).quota).toBe(c.quota);
  });

  it('differs from the reference exactly where ADR 0006 says it does', () => {
    expect(referenceClaudeViaChat()).toBe(300);
    const withReference = cases.filter((c) => c.reference !== undefined);
    expect(withReference.map((c) => [c.reference, c.quota])).toEqual([[300, 5550]]);
  });

  it('refuses an unpriced model unless self-use mode or the user accepted unpriced models', () => {
    const input = {
      tables,
      model: 'mystery-model',
      group: 'default',
      selfUseMode: false,
      acceptUnsetModelRatio: false,
    };
    expect(isPricingRefusal(resolvePricing(input))).toBe(true);
    for (const opened of [{ selfUseMode: true }, { acceptUnsetModelRatio: true }]) {
      const pricing = resolvePricing({ ...input, ...opened });
      if (isPricingRefusal(pricing)) throw new Error('refused');
      // 100 prompt tokens at the unset ratio 37.5
      expect(settleTokens(pricing, { promptTokens: 100, completionTokens: 0 }, QPU).quota).toBe(3750);
    }
  });
});
