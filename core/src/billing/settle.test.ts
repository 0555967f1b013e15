import { describe, expect, it } from 'vitest';
import { roundQuota, truncateQuota } from './quota-math.ts';
import type { Pricing } from './ratios.ts';
import { imageQuota, settleAudio, settleTokens, type TokenUsage } from './settle.ts';

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
