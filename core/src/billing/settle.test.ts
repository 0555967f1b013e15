import { describe, expect, it } from 'vitest';
import { roundQuota, truncateQuota } from './quota-math.ts';
import type { PriceShapes, Pricing } from './ratios.ts';
import {
  imageQuota,
  longContextTierOf,
  settleAudio,
  settleTokens,
  shapeLogFields,
  type TokenUsage,
} from './settle.ts';

const QPU = 500_000;
interface Ratios {
  model?: number;
  completion?: number;
  cache?: number;
  creation?: number;
  creation1h?: number;
  group?: number;
}
const perToken = (r: Ratios = {}): Pricing => ({
  kind: 'per-token',
  model: 'm',
  modelRatio: r.model ?? 1,
  completionRatio: r.completion ?? 1,
  cacheRatio: r.cache ?? 1,
  cacheCreationRatio: r.creation ?? 1.25,
  cacheCreation1hRatio: r.creation1h ?? 2,
  groupRatio: r.group ?? 1,
  isUnsetRatio: false,
});
const perCall = (modelPrice: number, groupRatio = 1): Pricing => ({
  kind: 'per-call',
  model: 'm',
  modelPrice,
  groupRatio,
});
const withShapes = (pricing: Pricing, shapes: PriceShapes): Pricing => ({ ...pricing, shapes });

describe('settleTokens', () => {
  // Every expected number is worked out by hand in the case name.
  const cases: [string, Pricing, TokenUsage, number][] = [
    [
      'gpt-4o: (1000 + 500 × 4) × 1.25 = 3750',
      perToken({ model: 1.25, completion: 4 }),
      { promptTokens: 1000, completionTokens: 500 },
      3750,
    ],
    [
      'cache read: (600 + 400 × 0.5 + 100 × 4) × 1.25 = 1500',
      perToken({ model: 1.25, completion: 4, cache: 0.5 }),
      { promptTokens: 1000, completionTokens: 100, cachedTokens: 400 },
      1500,
    ],
    [
      'Claude with cache read and write: (100 + 1000 × 0.1 + 2000 × 1.25 + 200 × 5) × 1.5 = 5550',
      perToken({ model: 1.5, completion: 5, cache: 0.1, creation: 1.25 }),
      { promptTokens: 3100, completionTokens: 200, cachedTokens: 1000, cacheWriteTokens: 2000 },
      5550,
    ],
    [
      'group ratio: (10 + 10 × 4) × 0.075 × 0.8 = 3',
      perToken({ model: 0.075, completion: 4, group: 0.8 }),
      { promptTokens: 10, completionTokens: 10 },
      3,
    ],
    [
      'rounds half up: 2 × 1.25 = 2.5 → 3',
      perToken({ model: 1.25 }),
      { promptTokens: 2, completionTokens: 0 },
      3,
    ],
    [
      'rounds down below half: 1 × 1.25 → 1',
      perToken({ model: 1.25 }),
      { promptTokens: 1, completionTokens: 0 },
      1,
    ],
    [
      'decimal, not binary: 100 × 0.145 = 14.5 → 15 (a float gives 14.4999…)',
      perToken({ model: 0.145 }),
      { promptTokens: 100, completionTokens: 0 },
      15,
    ],
    [
      'minimum 1: 1 × 0.075 rounds to 0 → 1',
      perToken({ model: 0.075 }),
      { promptTokens: 1, completionTokens: 0 },
      1,
    ],
    [
      'free model stays free (no minimum)',
      perToken({ model: 0 }),
      { promptTokens: 100, completionTokens: 100 },
      0,
    ],
    [
      'free group stays free',
      perToken({ model: 2, group: 0 }),
      { promptTokens: 100, completionTokens: 100 },
      0,
    ],
    ['per call: 0.1 USD × 500000 = 50000', perCall(0.1), { promptTokens: 10, completionTokens: 10 }, 50_000],
    ['per call × group 0.5 = 25000', perCall(0.1, 0.5), { promptTokens: 10, completionTokens: 10 }, 25_000],
    [
      'cached above the prompt is clamped: (0 + 100 × 0.5) × 1 = 50',
      perToken({ cache: 0.5 }),
      { promptTokens: 100, completionTokens: 0, cachedTokens: 150 },
      50,
    ],
    [
      'embeddings (no completion): 1000 × 0.01 = 10',
      perToken({ model: 0.01 }),
      { promptTokens: 1000, completionTokens: 0 },
      10,
    ],
  ];

  it.each(cases)('%s', (_case, pricing, usage, expected) => {
    expect(settleTokens(pricing, usage, QPU).quota).toBe(expected);
  });

  it('charges nothing and flags a request with no tokens at all (possibly an upstream timeout)', () => {
    expect(settleTokens(perToken({ model: 5 }), { promptTokens: 0, completionTokens: 0 }, QPU)).toEqual({
      quota: 0,
      isEmpty: true,
      isMinimumApplied: false,
    });
    expect(settleTokens(perCall(0.1), { promptTokens: 0, completionTokens: 0 }, QPU).quota).toBe(0);
  });

  it('says when the minimum-1 rule raised the bill', () => {
    const result = settleTokens(perToken({ model: 0.075 }), { promptTokens: 1, completionTokens: 0 }, QPU);
    expect(result.isMinimumApplied).toBe(true);
  });

  it('bills cache tokens from Anthropic once (the reference under-charged them as 300)', () => {
    // Anthropic reports input 100 (excluding cache), cache read 1000, cache write 2000. The reference put
    // prompt = 100, cached = 1000 and billed (100 − 1000 + 1000 × 0.1 + 200 × 5) × 1.5 = 300, dropping the write.
    const pricing = perToken({ model: 1.5, completion: 5, cache: 0.1 });
    const canonical = {
      promptTokens: 3100,
      completionTokens: 200,
      cachedTokens: 1000,
      cacheWriteTokens: 2000,
    };
    expect(settleTokens(pricing, canonical, QPU).quota).toBe(5550);
  });

  it('bills 1-hour cache writes at their own price (the issue 39 example: 10,575, not 9,450)', () => {
    // Claude Sonnet 4.5 at https://docs.anthropic.com/en/docs/about-claude/pricing: input $3, 5-minute write
    // $3.75, 1-hour write $6, cache hit $0.30, output $15 per million. 1000 input + 1000 1-hour writes + 1000
    // 5-minute writes + 3000 reads + 500 output = $0.02115 = 10,575 quota at 500,000 per USD.
    const pricing = perToken({ model: 1.5, completion: 5, cache: 0.1, creation: 1.25, creation1h: 2 });
    const usage = {
      promptTokens: 6000,
      completionTokens: 500,
      cachedTokens: 3000,
      cacheWriteTokens: 2000,
      cacheWrite1hTokens: 1000,
    };
    expect(settleTokens(pricing, usage, QPU).quota).toBe(10_575);
    // More 1-hour writes than writes (a confused upstream) bill no write twice: all 2000 at the 1-hour price,
    // 1000 × $3 + 2000 × $6 + 3000 × $0.30 + 500 × $15 = $0.0234 = 11,700 quota.
    expect(settleTokens(pricing, { ...usage, cacheWrite1hTokens: 5000 }, QPU).quota).toBe(11_700);
  });

  it('rejects negative or non-numeric token counts', () => {
    expect(() => settleTokens(perToken(), { promptTokens: -1, completionTokens: 0 }, QPU)).toThrow(
      RangeError,
    );
    expect(() => settleTokens(perToken(), { promptTokens: Number.NaN, completionTokens: 0 }, QPU)).toThrow();
  });
});

describe('settleAudio', () => {
  it('bills audio tokens at the audio ratio: (400 + 100×4 + 600×16 + 400×16×2) × 1.25 = 29000', () => {
    const usage = {
      promptTokens: 1000,
      completionTokens: 500,
      audioInputTokens: 600,
      audioOutputTokens: 400,
    };
    expect(settleAudio(perToken({ model: 1.25, completion: 4 }), usage, 16, QPU).quota).toBe(29_000);
  });

  it('is the text formula when there is no audio: (10 + 10 × 4) × 1.25 = 62.5 → 63', () => {
    const usage = { promptTokens: 10, completionTokens: 10 };
    expect(settleAudio(perToken({ model: 1.25, completion: 4 }), usage, 16, QPU).quota).toBe(63);
  });

  it('applies the minimum and the empty rule', () => {
    expect(
      settleAudio(perToken({ model: 0.001 }), { promptTokens: 1, completionTokens: 0 }, 8, QPU).quota,
    ).toBe(1);
    expect(settleAudio(perToken(), { promptTokens: 0, completionTokens: 0 }, 8, QPU).isEmpty).toBe(true);
  });
});

describe('imageQuota', () => {
  it.each([
    [
      'dall-e-3 per call, 1024x1792 hd ×2: 0.04 × 2 × 1.5 × 2 = 0.24 USD',
      perCall(0.04),
      { model: 'dall-e-3', size: '1024x1792', quality: 'hd', n: 2 },
      120_000,
    ],
    [
      'dall-e-3 1024x1024 hd: 0.04 × 1 × 2 = 0.08 USD',
      perCall(0.04),
      { model: 'dall-e-3', size: '1024x1024', quality: 'hd' },
      40_000,
    ],
    ['dall-e-2 256x256: 0.02 × 0.4 = 0.008 USD', perCall(0.02), { model: 'dall-e-2', size: '256x256' }, 4000],
    [
      'hd on another model costs nothing extra',
      perCall(0.02),
      { model: 'dall-e-2', size: '512x512', quality: 'hd' },
      4500,
    ],
    [
      'ratio-priced: 0.0025 × 16 = 0.04 USD',
      perToken({ model: 16 }),
      { model: 'img', size: '1024x1024' },
      20_000,
    ],
    [
      'ratio-priced, group 0.5, n 3: 0.04 × 3 × 0.5 = 0.06 USD',
      perToken({ model: 16, group: 0.5 }),
      { model: 'img', n: 3 },
      30_000,
    ],
    ['unknown size costs 1×', perCall(0.04), { model: 'x', size: '2048x2048' }, 20_000],
  ])('%s', (_case, pricing, request, expected) => {
    expect(imageQuota(pricing, request, QPU)).toBe(expected);
  });

  it('charges ratio-priced images the same as the balance check (the reference settled n × ratio = 16)', () => {
    const pricing = perToken({ model: 16 });
    expect(imageQuota(pricing, { model: 'img', n: 1 }, QPU)).not.toBe(16);
  });

  it('rejects a non-positive image count', () => {
    expect(() => imageQuota(perCall(0.04), { model: 'x', n: 0 }, QPU)).toThrow(RangeError);
  });
});

describe('quota rounding', () => {
  it('rounds half up on the decimal value and truncates on request', () => {
    expect(roundQuota(0.1 * 3 * 5)).toBe(2); // 1.5000000000000002 → 2
    expect(roundQuota(14.499999999999998)).toBe(15);
    expect(roundQuota(14.4)).toBe(14);
    expect(truncateQuota(82.5 * 0.8)).toBe(66);
    expect(() => roundQuota(Number.POSITIVE_INFINITY)).toThrow(RangeError);
  });
});

describe('settleTokens with the price shapes (docs/adr/0042)', () => {
  // Claude Sonnet 4.5 at https://docs.anthropic.com/en/docs/about-claude/pricing: $3 input, $15 output, $0.30 cache
  // hit, $3.75 / $6 5-minute / 1-hour writes per million; past 200K prompt tokens the whole call at $6 / $22.50,
  // the cache prices doubled with the input ($0.60, $7.50, $12).
  const sonnet = withShapes(
    perToken({ model: 1.5, completion: 5, cache: 0.1, creation: 1.25, creation1h: 2 }),
    {
      longContextTiers: [{ above: 200_000, input: 2, output: 1.5 }],
      fees: { web_search: 0.01 },
    },
  );
  // GPT-5 at https://platform.openai.com/docs/pricing: $1.25 input, $0.125 cached, $10 output; priority
  // (https://openai.com/api-priority-processing/) $2.50 / $0.25 / $20, flex $0.625 / $0.0625 / $5.
  const gpt5 = withShapes(perToken({ model: 0.625, completion: 8, cache: 0.1 }), {
    serviceTiers: { priority: 2, flex: 0.5 },
  });
  const gpt5Usage = { promptTokens: 10_000, completionTokens: 1000, cachedTokens: 2000 };

  it.each<[string, Pricing, TokenUsage, number]>([
    [
      'issue 39: 250,000 input + 1,000 output past 200K: 250000 × $6 + 1000 × $22.50 = $1.5225',
      sonnet,
      { promptTokens: 250_000, completionTokens: 1000 },
      761_250,
    ],
    [
      '250,000 input + 500 output: 250000 × $6 + 500 × $22.50 = $1.51125',
      sonnet,
      { promptTokens: 250_000, completionTokens: 500 },
      755_625,
    ],
    [
      'exactly 200,000 is not past the tier: 200000 × $3 + 500 × $15 = $0.6075',
      sonnet,
      { promptTokens: 200_000, completionTokens: 500 },
      303_750,
    ],
    ['200,001 is: 200001 × $6 = $1.200006', sonnet, { promptTokens: 200_001, completionTokens: 0 }, 600_003],
    [
      'cache reads and writes count in the prompt and cost 2 × with it: 10000 × $6 + 200000 × $0.60 + 20000 × $7.50 + 20000 × $12 + 1000 × $22.50 = $0.5925',
      sonnet,
      {
        promptTokens: 250_000,
        completionTokens: 1000,
        cachedTokens: 200_000,
        cacheWriteTokens: 40_000,
        cacheWrite1hTokens: 20_000,
      },
      296_250,
    ],
    [
      'three web searches add 3 × $0.01 to the 1000 × $3 + 500 × $15 tokens: $0.0105 + $0.03',
      sonnet,
      { promptTokens: 1000, completionTokens: 500, webSearchCalls: 3 },
      20_250,
    ],
    ['GPT-5 standard: 8000 × $1.25 + 2000 × $0.125 + 1000 × $10 = $0.02025', gpt5, gpt5Usage, 10_125],
    [
      'GPT-5 served at priority: 8000 × $2.50 + 2000 × $0.25 + 1000 × $20 = $0.0405',
      gpt5,
      { ...gpt5Usage, serviceTier: 'priority' },
      20_250,
    ],
    [
      'GPT-5 served at flex: 8000 × $0.625 + 2000 × $0.0625 + 1000 × $5 = $0.010125, 5062.5 rounds half up',
      gpt5,
      { ...gpt5Usage, serviceTier: 'flex' },
      5063,
    ],
    [
      "a tier the model has no multiplier for ('default') costs the standard price",
      gpt5,
      { ...gpt5Usage, serviceTier: 'default' },
      10_125,
    ],
    [
      'a tier is a whole-bill multiplier, the group ratio after it: $0.0405 × 0.5',
      withShapes(perToken({ model: 0.625, completion: 8, cache: 0.1, group: 0.5 }), {
        serviceTiers: { priority: 2 },
      }),
      { ...gpt5Usage, serviceTier: 'priority' },
      10_125,
    ],
    [
      'a tier with its own cache multiplier: (100 × 3 + 100 × 0.1 × 1.25 + 10 × 4 × 1.5) × 1',
      withShapes(perToken({ completion: 4, cache: 0.1 }), {
        longContextTiers: [{ above: 150, input: 3, output: 1.5, cache: 1.25 }],
      }),
      { promptTokens: 200, completionTokens: 10, cachedTokens: 100 },
      373,
    ],
    [
      'tier, priority, search fee and group ratio together: ((300 × 2 + 100 × 5 × 1.5) × 1.5 × 2 + 2 × 0.01 × 500000) × 0.8',
      withShapes(perToken({ model: 1.5, completion: 5, group: 0.8 }), {
        longContextTiers: [{ above: 200, input: 2, output: 1.5 }],
        serviceTiers: { priority: 2 },
        fees: { web_search: 0.01 },
      }),
      { promptTokens: 300, completionTokens: 100, serviceTier: 'priority', webSearchCalls: 2 },
      11_240,
    ],
    [
      'images at $0.039 each: 2 × $0.039 + 100 × $0.30 + 10 × $2.50 per million',
      withShapes(perToken({ model: 0.15, completion: 25 / 3 }), { fees: { image: 0.039 } }),
      { promptTokens: 100, completionTokens: 10, imageCount: 2 },
      39_028,
    ],
    [
      'searches the model has no fee for are not charged',
      perToken({ model: 1.5, completion: 5 }),
      { promptTokens: 1000, completionTokens: 500, webSearchCalls: 3 },
      5250,
    ],
    [
      'per call: the fees are added, the tiers do not apply: ($0.04 + 2 × $0.01) × 500000',
      withShapes(perCall(0.04), {
        longContextTiers: [{ above: 10, input: 2, output: 2 }],
        serviceTiers: { priority: 2 },
        fees: { web_search: 0.01 },
      }),
      { promptTokens: 100_000, completionTokens: 10, serviceTier: 'priority', webSearchCalls: 2 },
      30_000,
    ],
    [
      'per call, fees with the group ratio: ($0.04 + $0.01) × 500000 × 1.5',
      withShapes(perCall(0.04, 1.5), { fees: { web_search: 0.01 } }),
      { promptTokens: 1, completionTokens: 1, webSearchCalls: 1 },
      37_500,
    ],
    [
      'minimum 1 at flex: 1 × 0.025 × 0.5 rounds to 0 → 1',
      withShapes(perToken({ model: 0.025 }), { serviceTiers: { flex: 0.5 } }),
      { promptTokens: 1, completionTokens: 0, serviceTier: 'flex' },
      1,
    ],
  ])('%s', (_case, pricing, usage, expected) => {
    expect(settleTokens(pricing, usage, QPU).quota).toBe(expected);
  });

  it('says which shapes applied, and none when none did', () => {
    const long = settleTokens(sonnet, { promptTokens: 250_000, completionTokens: 1, webSearchCalls: 3 }, QPU);
    expect(long.shapes).toEqual({
      tier: { above: 200_000, input: 2, output: 1.5 },
      webSearchCalls: 3,
      webSearchPrice: 0.01,
      feesQuota: 15_000,
    });
    expect(shapeLogFields(long.shapes)).toEqual({
      long_context_above: 200_000,
      long_context_input_ratio: 2,
      long_context_output_ratio: 1.5,
      long_context_cache_ratio: 2,
      web_search_calls: 3,
      web_search_price: 0.01,
      fees_quota: 15_000,
    });
    const priority = settleTokens(gpt5, { ...gpt5Usage, serviceTier: 'priority' }, QPU);
    expect(shapeLogFields(priority.shapes)).toEqual({ service_tier: 'priority', service_tier_ratio: 2 });
    expect(settleTokens(gpt5, { ...gpt5Usage, serviceTier: 'default' }, QPU).shapes).toBeUndefined();
    expect(settleTokens(sonnet, { promptTokens: 1000, completionTokens: 1 }, QPU).shapes).toBeUndefined();
    expect(shapeLogFields(undefined)).toEqual({});
  });

  it('charges nothing for an answer without tokens, whatever it reports searching', () => {
    const empty = settleTokens(sonnet, { promptTokens: 0, completionTokens: 0, webSearchCalls: 3 }, QPU);
    expect(empty).toEqual({ quota: 0, isEmpty: true, isMinimumApplied: false });
  });

  it('picks the highest tier the prompt passes, whatever their order', () => {
    const tiers = [
      { above: 128_000, input: 2.5, output: 2.5 },
      { above: 32_000, input: 2, output: 2 },
    ];
    expect(longContextTierOf(tiers, 32_000)).toBeUndefined();
    expect(longContextTierOf(tiers, 32_001)?.above).toBe(32_000);
    expect(longContextTierOf(tiers, 200_000)?.above).toBe(128_000);
    expect(longContextTierOf(undefined, 1_000_000)).toBeUndefined();
  });
});
