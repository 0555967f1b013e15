import { describe, expect, it } from 'vitest';
import { DEFAULT_COMPLETION_RATIO } from './default-ratios.ts';
import { buildPricing, completionRatioOf, type PricingInput, QuotaType } from './pricing.ts';

/** Unless a test names the serving groups, every priced model is served, in a group the caller cannot see. */
function input(overrides: Partial<PricingInput> = {}): PricingInput {
  const names = [...Object.keys(overrides.modelRatio ?? {}), ...Object.keys(overrides.modelPrice ?? {})];
  return {
    modelRatio: {},
    completionRatio: {},
    modelPrice: {},
    servingGroups: new Map(names.map((name) => [name, ['hidden']])),
    visibleGroups: new Set(['default', 'vip']),
    ...overrides,
  };
}

describe('pricing list', () => {
  it('lists a ratio model with its ratio and completion ratio, and a priced model as per call', () => {
    const list = buildPricing(
      input({
        modelRatio: { 'my-chat': 1.5 },
        completionRatio: { 'my-chat': 4 },
        modelPrice: { 'my-image': 0.04 },
      }),
    );
    expect(list).toEqual([
      {
        model_name: 'my-chat',
        quota_type: QuotaType.Ratio,
        model_ratio: 1.5,
        model_price: 0,
        completion_ratio: 4,
        enable_groups: [],
      },
      {
        model_name: 'my-image',
        quota_type: QuotaType.Price,
        model_ratio: 0,
        model_price: 0.04,
        completion_ratio: 0,
        enable_groups: [],
      },
    ]);
  });

  it('bills a model with both a price and a ratio per call, listing it once', () => {
    const list = buildPricing(input({ modelRatio: { both: 2 }, modelPrice: { both: 0.5 } }));
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ model_name: 'both', quota_type: QuotaType.Price, model_price: 0.5 });
  });

  it('keeps a free model (ratio 0) and a free per-call model (price 0)', () => {
    const list = buildPricing(input({ modelRatio: { 'free-chat': 0 }, modelPrice: { 'free-call': 0 } }));
    expect(list.map((e) => [e.model_name, e.quota_type])).toEqual([
      ['free-chat', QuotaType.Ratio],
      ['free-call', QuotaType.Price],
    ]);
  });

  it('lists only the models an enabled channel serves, and of those only the priced ones', () => {
    const list = buildPricing(
      input({
        modelRatio: { served: 1, unserved: 1 },
        modelPrice: { 'unserved-call': 0.1 },
        servingGroups: new Map([
          ['served', ['default']],
          ['served-unpriced', ['default']],
        ]),
      }),
    );
    expect(list.map((e) => e.model_name)).toEqual(['served']);
  });

  it('names only the visible groups that serve each model', () => {
    const list = buildPricing(
      input({
        modelRatio: { a: 1, b: 1 },
        servingGroups: new Map([
          ['a', ['default', 'svip', 'vip']],
          ['b', ['svip']],
        ]),
      }),
    );
    expect(list.find((e) => e.model_name === 'a')?.enable_groups).toEqual(['default', 'vip']);
    expect(list.find((e) => e.model_name === 'b')?.enable_groups).toEqual([]);
  });

  it('orders per-token before per-call, gpt models first, then by name', () => {
    const list = buildPricing(
      input({
        modelRatio: { zeta: 1, 'gpt-b': 1, alpha: 1, 'gpt-a': 1 },
        modelPrice: { 'a-call': 1, 'gpt-call': 1 },
      }),
    );
    expect(list.map((e) => e.model_name)).toEqual(['gpt-a', 'gpt-b', 'alpha', 'zeta', 'gpt-call', 'a-call']);
  });
});

describe('completion ratio', () => {
  it('prefers the configured ratio, then the built-in one, then 1', () => {
    expect(completionRatioOf('gpt-4.1', { 'gpt-4.1': 2 })).toBe(2);
    expect(completionRatioOf('gpt-4.1', {})).toBe(DEFAULT_COMPLETION_RATIO['gpt-4.1']);
    expect(DEFAULT_COMPLETION_RATIO['gpt-4.1']).toBe(4);
    expect(completionRatioOf('never-heard-of-it', {})).toBe(1);
  });
});
