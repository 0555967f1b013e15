import { describe, expect, it } from 'vitest';
import {
  DEFAULT_CACHE_RATIO,
  DEFAULT_COMPLETION_RATIO,
  DEFAULT_MODEL_PRICE,
  DEFAULT_MODEL_RATIO,
} from './default-ratios.ts';

const isPrice = (value: number) => Number.isFinite(value) && value >= 0;

describe('built-in prices', () => {
  it('gives every token-priced model a completion ratio and nothing else one', () => {
    expect(Object.keys(DEFAULT_COMPLETION_RATIO).sort()).toEqual(Object.keys(DEFAULT_MODEL_RATIO).sort());
  });

  it('gives cache ratios only to token-priced models, each a discount on input', () => {
    for (const [model, ratio] of Object.entries(DEFAULT_CACHE_RATIO)) {
      expect(DEFAULT_MODEL_RATIO, model).toHaveProperty([model]);
      expect(ratio, model).toBeGreaterThan(0);
      expect(ratio, model).toBeLessThanOrEqual(1);
    }
  });

  it('never prices a model both per call and per token, since the per-call price would hide the ratio', () => {
    const both = Object.keys(DEFAULT_MODEL_PRICE).filter((model) => model in DEFAULT_MODEL_RATIO);
    expect(both).toEqual([]);
  });

  it('holds only finite, non-negative numbers', () => {
    const all = [DEFAULT_MODEL_RATIO, DEFAULT_COMPLETION_RATIO, DEFAULT_CACHE_RATIO, DEFAULT_MODEL_PRICE];
    const bad = all.flatMap((map) => Object.entries(map).filter(([, value]) => !isPrice(value)));
    expect(bad).toEqual([]);
  });

  it('turns USD per 1M tokens into ratio = input / 2, completion = output / input, cache = cached / input', () => {
    // gpt-4.1: $2 in, $8 out, $0.50 cached.
    expect([
      DEFAULT_MODEL_RATIO['gpt-4.1'],
      DEFAULT_COMPLETION_RATIO['gpt-4.1'],
      DEFAULT_CACHE_RATIO['gpt-4.1'],
    ]).toEqual([1, 4, 0.25]);
    // gemini-2.5-flash: $0.30 in, $2.50 out, rounded to six digits.
    expect(DEFAULT_COMPLETION_RATIO['gemini-2.5-flash']).toBe(8.33333);
  });

  it.each([
    ['gpt-4o', 1.25],
    ['gpt-4o-mini', 0.075],
    ['gpt-4', 15],
    ['gpt-4.5-preview', 37.5],
    ['o3-mini-high', 0.55],
    ['text-embedding-3-small', 0.01],
    ['whisper-1', 15],
    ['claude-3-5-haiku-20241022', 0.5],
    ['claude-3-opus-20240229', 7.5],
    ['gemini-2.0-flash', 0.05],
    ['gemini-1.5-pro-latest', 1.25],
    ['deepseek-chat', 0.135],
    ['deepseek-reasoner', 0.275],
    ['grok-3-beta', 1.5],
    ['glm-4-flash', 0],
    ['command-r-plus', 1.5],
  ])('keeps the reference ratio of %s at %s', (model, ratio) => {
    expect(DEFAULT_MODEL_RATIO[model]).toBe(ratio);
  });

  it.each([
    ['gpt-4o', 4],
    ['gpt-4o-2024-05-13', 3],
    ['gpt-4-turbo', 3],
    ['claude-3-7-sonnet-20250219', 5],
    ['deepseek-chat', 4],
    ['command-r', 3],
  ])('keeps the reference completion ratio of %s at %s', (model, ratio) => {
    expect(DEFAULT_COMPLETION_RATIO[model]).toBe(ratio);
  });

  it.each([
    ['gpt-4o', 0.5],
    ['deepseek-chat', 0.25],
    ['claude-3-5-sonnet-20241022', 0.1],
  ])('keeps the reference cache ratio of %s at %s', (model, ratio) => {
    expect(DEFAULT_CACHE_RATIO[model]).toBe(ratio);
  });

  it.each([
    ['dall-e-3', 0.04],
    ['mj_imagine', 0.1],
    ['mj_pan', 0.1],
    ['mj_upscale', 0.05],
    ['mj_describe', 0.05],
    ['mj_inpaint', 0],
    ['mj_custom_zoom', 0],
    ['swap_face', 0.05],
    ['suno_music', 0.1],
    ['suno_lyrics', 0.01],
  ])('charges %s at $%s per call', (model, price) => {
    expect(DEFAULT_MODEL_PRICE[model]).toBe(price);
  });

  it('cannot be changed at run time by accident', () => {
    expect(Object.isFrozen(DEFAULT_MODEL_RATIO)).toBe(true);
    expect(Object.isFrozen(DEFAULT_MODEL_PRICE)).toBe(true);
  });
});
