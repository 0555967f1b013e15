import { describe, expect, it } from 'vitest';
import {
  builtInCompletionRatio,
  isPricingRefusal,
  lookupAudioRatio,
  lookupCacheCreationRatio,
  lookupCacheRatio,
  lookupCompletionRatio,
  lookupGroupRatio,
  type PriceTables,
  priceModelName,
  resolvePricing,
  UNSET_MODEL_RATIO,
} from './ratios.ts';

const tables: PriceTables = {
  modelRatio: { 'gpt-4o': 1.25, 'claude-3-opus-20240229': 7.5, 'custom/model': 2, 'free-model': 0 },
  completionRatio: { 'gpt-4o': 4, 'claude-3-opus-20240229': 6, 'custom/model': 1.5 },
  cacheRatio: { 'gpt-4o': 0.5 },
  modelPrice: { 'dall-e-3': 0.04, 'gpt-4-gizmo-*': 0.1, 'gpt-4o': 0.2 },
  groupRatio: { default: 1, vip: 0.8 },
  cacheCreationRatio: { 'claude-3-opus-20240229': 2 },
};

const base = { tables, group: 'default', selfUseMode: false, acceptUnsetModelRatio: false };

describe('priceModelName', () => {
  it.each([
    ['gpt-4-gizmo-g-abc123', 'gpt-4-gizmo-*'],
    ['gpt-4o-gizmo-g-xyz', 'gpt-4o-gizmo-*'],
    ['gpt-4o', 'gpt-4o'],
    ['gpt-4-turbo', 'gpt-4-turbo'],
  ])('prices %s under %s', (model, expected) => {
    expect(priceModelName(model)).toBe(expected);
  });
});

describe('resolvePricing', () => {
  it('bills a model with a per-call price per call, even when it also has a ratio', () => {
    expect(resolvePricing({ ...base, model: 'gpt-4o', group: 'vip' })).toEqual({
      kind: 'per-call',
      model: 'gpt-4o',
      modelPrice: 0.2,
      groupRatio: 0.8,
    });
  });

  it('finds the shared price of every custom GPT', () => {
    const pricing = resolvePricing({ ...base, model: 'gpt-4-gizmo-g-123' });
    expect(pricing).toMatchObject({ kind: 'per-call', modelPrice: 0.1 });
  });

  it('resolves every ratio of a per-token model', () => {
    const pricing = resolvePricing({
      ...base,
      tables: { ...tables, modelPrice: {} },
      model: 'gpt-4o',
      group: 'vip',
    });
    expect(pricing).toEqual({
      kind: 'per-token',
      model: 'gpt-4o',
      modelRatio: 1.25,
      completionRatio: 4,
      cacheRatio: 0.5,
      cacheCreationRatio: 1.25,
      cacheCreation1hRatio: 2,
      groupRatio: 0.8,
      isUnsetRatio: false,
    });
  });

  it('refuses an unpriced model with model_price_error, telling root what to do', () => {
    const user = resolvePricing({ ...base, model: 'mystery' });
    const root = resolvePricing({ ...base, model: 'mystery', isRoot: true });
    expect(isPricingRefusal(user) && user.message).toMatch(/ask an administrator/);
    expect(isPricingRefusal(root) && root.message).toMatch(/self-use mode/);
    expect(user).toMatchObject({ code: 'model_price_error' });
  });

  it.each([
    ['self-use mode', { selfUseMode: true }],
    ['the user accepting unpriced models', { acceptUnsetModelRatio: true }],
  ])('bills an unpriced model at ratio 37.5 with %s', (_label, flags) => {
    const pricing = resolvePricing({ ...base, ...flags, model: 'mystery' });
    expect(pricing).toMatchObject({ kind: 'per-token', modelRatio: UNSET_MODEL_RATIO, isUnsetRatio: true });
    expect(UNSET_MODEL_RATIO).toBe(37.5);
  });

  it('keeps a configured ratio of 0 (a free model) instead of treating it as unset', () => {
    expect(resolvePricing({ ...base, model: 'free-model' })).toMatchObject({
      modelRatio: 0,
      isUnsetRatio: false,
    });
  });
});

describe('completion ratio', () => {
  it('lets the configured value win over the built-in family rule (Claude included)', () => {
    expect(lookupCompletionRatio(tables, 'claude-3-opus-20240229')).toBe(6);
    expect(lookupCompletionRatio(tables, 'custom/model')).toBe(1.5);
  });

  it.each([
    ['gpt-4o-2099-01-01', 4],
    ['gpt-4o-2024-05-13', 3],
    ['chatgpt-4o-latest', 3],
    ['gpt-4.5-preview', 2],
    ['gpt-4-turbo-2024-04-09', 3],
    ['gpt-4-1106-preview', 3],
    ['gpt-4-0613', 2],
    ['o1-mini', 4],
    ['o3-mini-high', 4],
    ['gpt-3.5-turbo', 3],
    ['gpt-3.5-turbo-0125', 3],
    ['gpt-3.5-turbo-1106', 2],
    ['gpt-3.5-turbo-16k', 4 / 3],
    ['claude-2.1', 3],
    ['claude-3-haiku-20240307', 5],
    ['mistral-large', 3],
    ['gemini-2.5-pro-preview-06-05', 8],
    ['gemini-1.5-flash', 4],
    ['command-r', 3],
    ['command-r-plus', 5],
    ['command-r-08-2024', 4],
    ['deepseek-chat', 4],
    ['ERNIE-Speed-8K', 2],
    ['llama3-8b-8192', 2],
    ['some-new-model', 1],
    ['gpt-4-gizmo-g-1', 1],
  ])('falls back to the family rule for unconfigured %s → %d', (model, expected) => {
    expect(lookupCompletionRatio({ completionRatio: {} }, model)).toBeCloseTo(expected, 12);
  });

  it('has no family rule for an unknown model', () => {
    expect(builtInCompletionRatio('acme-large')).toBeUndefined();
  });
});

describe('group, cache and audio ratios', () => {
  it('costs 1 in a group missing from GroupRatio', () => {
    expect(lookupGroupRatio(tables, 'vip')).toBe(0.8);
    expect(lookupGroupRatio(tables, 'gone')).toBe(1);
  });

  it('gives no cache discount unless configured and 1.25 for cache writes unless configured', () => {
    expect(lookupCacheRatio(tables, 'gpt-4o')).toBe(0.5);
    expect(lookupCacheRatio(tables, 'claude-3-opus-20240229')).toBe(1);
    expect(lookupCacheCreationRatio(tables, 'claude-3-opus-20240229')).toBe(2);
    expect(lookupCacheCreationRatio(tables, 'gpt-4o')).toBe(1.25);
    expect(lookupCacheCreationRatio({}, 'gpt-4o')).toBe(1.25);
  });

  it.each([
    ['gpt-4o-realtime-preview-2024-12-17', 8],
    ['gpt-4o-mini-realtime-preview', 10 / 0.6],
    // The undated names are today's snapshots: audio $40 over text $5 (realtime) and $2.50 (audio), not the
    // launch price of $100 the 2024-10-01 snapshots kept (https://platform.openai.com/docs/pricing, audio tokens).
    ['gpt-4o-realtime-preview', 8],
    ['gpt-4o-realtime-preview-2025-06-03', 8],
    ['gpt-4o-realtime-preview-2024-10-01', 20],
    ['gpt-4o-audio-preview-2024-12-17', 16],
    ['gpt-4o-mini-audio-preview', 10 / 0.15],
    ['gpt-4o-audio-preview', 16],
    ['gpt-4o-audio-preview-2024-10-01', 40],
    ['whisper-1', 20],
  ])('prices audio of %s at %d × text', (model, expected) => {
    expect(lookupAudioRatio(model)).toBeCloseTo(expected, 12);
  });
});

describe('resolvePricing with group prices', () => {
  const grouped: PriceTables = {
    ...tables,
    modelPrice: { 'dall-e-3': 0.04, 'gpt-4-gizmo-*': 0.1 },
    groupPrices: {
      modelRatio: {
        vip: { 'gpt-4o': 1, 'dall-e-3': 3, 'gpt-4-gizmo-*': 0.5 },
        team: { 'claude-3-opus-20240229': 5 },
      },
      completionRatio: { vip: { 'gpt-4o': 2 }, team: { 'gpt-4o': 8 } },
      cacheRatio: { vip: { 'gpt-4o': 0.1 } },
      cacheCreationRatio: { vip: { 'gpt-4o': 1.5 }, team: { 'claude-3-opus-20240229': 1.1 } },
      modelPrice: { team: { 'gpt-4o': 0.3, 'new-model': 0.05 }, vip: { 'free-call': 0 } },
    },
  };
  const at = (group: string, model: string, extra: Partial<typeof base> = {}) =>
    resolvePricing({ ...base, ...extra, tables: grouped, model, group });

  it('bills a group member the group model ratio with the group relative ratios, and no GroupRatio', () => {
    expect(at('vip', 'gpt-4o')).toEqual({
      kind: 'per-token',
      model: 'gpt-4o',
      modelRatio: 1,
      completionRatio: 2,
      cacheRatio: 0.1,
      cacheCreationRatio: 1.5,
      cacheCreation1hRatio: 2,
      groupRatio: 1,
      isUnsetRatio: false,
    });
  });

  it('bills a user outside the group the un-grouped price, multiplied by their GroupRatio', () => {
    expect(at('default', 'gpt-4o')).toEqual({
      kind: 'per-token',
      model: 'gpt-4o',
      modelRatio: 1.25,
      completionRatio: 4,
      cacheRatio: 0.5,
      cacheCreationRatio: 1.25,
      cacheCreation1hRatio: 2,
      groupRatio: 1,
      isUnsetRatio: false,
    });
    const other = { ...grouped, groupRatio: { default: 1, vip: 0.8, svip: 0.6 } };
    expect(resolvePricing({ ...base, tables: other, model: 'gpt-4o', group: 'svip' })).toMatchObject({
      modelRatio: 1.25,
      groupRatio: 0.6,
    });
  });

  it('falls back field by field: a group input price keeps the model output, cache and cache-write ratios', () => {
    expect(at('team', 'claude-3-opus-20240229')).toEqual({
      kind: 'per-token',
      model: 'claude-3-opus-20240229',
      modelRatio: 5,
      completionRatio: 6,
      cacheRatio: 1,
      cacheCreationRatio: 1.1,
      cacheCreation1hRatio: 2,
      groupRatio: 1,
      isUnsetRatio: false,
    });
  });

  it('applies a group relative ratio to the un-grouped input price, GroupRatio still multiplying it', () => {
    // Without its per-call price, team has only an output ratio of its own for gpt-4o.
    const tablesWithoutTeamCall: PriceTables = {
      ...grouped,
      groupPrices: { ...grouped.groupPrices, modelPrice: {} },
      groupRatio: { default: 1, team: 0.5 },
    };
    expect(
      resolvePricing({ ...base, tables: tablesWithoutTeamCall, model: 'gpt-4o', group: 'team' }),
    ).toMatchObject({
      kind: 'per-token',
      modelRatio: 1.25,
      completionRatio: 8,
      cacheRatio: 0.5,
      groupRatio: 0.5,
    });
  });

  it('bills a group per-call price per call for that group only, without GroupRatio', () => {
    const vipTeam = { ...grouped, groupRatio: { default: 1, team: 2 } };
    expect(resolvePricing({ ...base, tables: vipTeam, model: 'gpt-4o', group: 'team' })).toEqual({
      kind: 'per-call',
      model: 'gpt-4o',
      modelPrice: 0.3,
      groupRatio: 1,
    });
    expect(at('vip', 'gpt-4o')).toMatchObject({ kind: 'per-token' });
    expect(at('vip', 'free-call')).toEqual({
      kind: 'per-call',
      model: 'free-call',
      modelPrice: 0,
      groupRatio: 1,
    });
  });

  it('lets a group model ratio win over an un-grouped per-call price, for that group only', () => {
    expect(at('vip', 'dall-e-3')).toMatchObject({ kind: 'per-token', modelRatio: 3, groupRatio: 1 });
    expect(at('default', 'dall-e-3')).toMatchObject({ kind: 'per-call', modelPrice: 0.04 });
  });

  it('prices a model only a group lists for that group, and refuses it for the others', () => {
    expect(at('team', 'new-model')).toMatchObject({ kind: 'per-call', modelPrice: 0.05 });
    expect(isPricingRefusal(at('vip', 'new-model'))).toBe(true);
    expect(at('vip', 'new-model', { selfUseMode: true })).toMatchObject({
      modelRatio: UNSET_MODEL_RATIO,
      isUnsetRatio: true,
    });
  });

  it('looks group entries up under the shared custom GPT name', () => {
    expect(at('vip', 'gpt-4-gizmo-g-abc')).toMatchObject({ kind: 'per-token', modelRatio: 0.5 });
    expect(at('default', 'gpt-4-gizmo-g-abc')).toMatchObject({ kind: 'per-call', modelPrice: 0.1 });
  });

  it('never reads inherited properties as groups or models', () => {
    expect(at('constructor', 'gpt-4o')).toMatchObject({
      kind: 'per-token',
      modelRatio: 1.25,
      completionRatio: 4,
    });
    expect(at('vip', 'hasOwnProperty')).toMatchObject({ code: 'model_price_error' });
  });

  it('bills cache writes at the CreateCacheRatio entry, else 1.25', () => {
    expect(at('default', 'claude-3-opus-20240229')).toMatchObject({ cacheCreationRatio: 2 });
    expect(at('default', 'free-model')).toMatchObject({ cacheCreationRatio: 1.25 });
    expect(
      resolvePricing({
        ...base,
        tables: { ...tables, modelPrice: {}, cacheCreationRatio: undefined },
        model: 'gpt-4o',
        group: 'vip',
      }),
    ).toMatchObject({ cacheCreationRatio: 1.25 });
  });
});

describe('resolvePricing with the price shapes (docs/adr/0042)', () => {
  const shaped: PriceTables = {
    ...tables,
    modelRatio: { ...tables.modelRatio, 'claude-sonnet-4-5': 1.5, 'claude-sonnet-4-5-20250929': 1.5 },
    modelPrice: { ...tables.modelPrice, 'sonar-pro': 0.005 },
    longContextTiers: {
      'claude-sonnet-4-5*': [{ above: 200_000, input: 2, output: 1.5 }],
      'claude-sonnet-4-5-20250929': [{ above: 100_000, input: 3, output: 3 }],
      'sonar*': [{ above: 1, input: 9, output: 9 }],
    },
    serviceTierRatio: { 'gpt-*': { flex: 0.5 }, 'claude-*': { priority: 1.5 } },
    requestFees: { 'claude-*': { web_search: 0.01 }, 'claude-sonnet-*': { web_search: 0.02 }, sonar: {} },
  };

  it('attaches the exact entry, else the longest prefix, of each shape', () => {
    const pricing = resolvePricing({ ...base, tables: shaped, model: 'claude-sonnet-4-5' });
    expect(pricing).toMatchObject({
      kind: 'per-token',
      modelRatio: 1.5,
      shapes: {
        longContextTiers: [{ above: 200_000, input: 2, output: 1.5 }],
        serviceTiers: { priority: 1.5 },
        fees: { web_search: 0.02 },
      },
    });
    const dated = resolvePricing({ ...base, tables: shaped, model: 'claude-sonnet-4-5-20250929' });
    expect(dated).toMatchObject({ shapes: { longContextTiers: [{ above: 100_000, input: 3, output: 3 }] } });
  });

  it('gives a per-call price its fees only: the operator priced the tokens all in', () => {
    const perCall = resolvePricing({ ...base, tables: shaped, model: 'sonar-pro' });
    expect(perCall).toEqual({ kind: 'per-call', model: 'sonar-pro', modelPrice: 0.005, groupRatio: 1 });
    const withFee = resolvePricing({
      ...base,
      tables: { ...shaped, requestFees: { 'sonar*': { web_search: 0.005 } } },
      model: 'sonar-pro',
    });
    expect(withFee).toMatchObject({ kind: 'per-call', shapes: { fees: { web_search: 0.005 } } });
    expect(isPricingRefusal(withFee) || withFee.shapes?.longContextTiers).toBeFalsy();
  });

  it("attaches the shapes to a group's own price too", () => {
    const grouped: PriceTables = {
      ...shaped,
      groupPrices: { modelRatio: { vip: { 'claude-sonnet-4-5': 1 } } },
    };
    expect(
      resolvePricing({ ...base, tables: grouped, model: 'claude-sonnet-4-5', group: 'vip' }),
    ).toMatchObject({
      modelRatio: 1,
      groupRatio: 1,
      shapes: { longContextTiers: [{ above: 200_000 }], fees: { web_search: 0.02 } },
    });
  });

  it('adds nothing to a model without shapes', () => {
    expect(resolvePricing({ ...base, tables: shaped, model: 'custom/model' })).not.toHaveProperty('shapes');
  });
});
