import { describe, expect, it } from 'vitest';
import { MjAction, mjModelOf } from '../domain/midjourney-actions.ts';
import {
  defaultModelsByType,
  findProviderType,
  knownModelOwners,
  PROVIDER_TYPES,
  ProviderTypeId,
  refusalOfKey,
} from './catalogue.ts';

/** Spec 02 section 3: every value the console offers. */
const SPEC_VALUES = [
  1, 2, 5, 36, 4, 14, 33, 41, 3, 34, 39, 43, 15, 46, 17, 18, 16, 26, 24, 11, 47, 25, 20, 19, 23, 31, 35, 37,
  38, 40, 42, 8, 22, 21, 44, 45, 48,
  // Beyond the spec: video task types (issue 31), numbered as the reference numbers them (Kling 50, Jimeng 51, Vidu 52,
  // Doubao video 54, Sora 55), and Gemini Veo.
  50,
  51, 52, 54, 55, 60,
];

describe('provider catalogue', () => {
  it('has exactly the types of the spec, each once', () => {
    const values = PROVIDER_TYPES.map((p) => p.value);
    expect(new Set(values).size).toBe(values.length);
    expect([...values].sort((a, b) => a - b)).toEqual([...SPEC_VALUES].sort((a, b) => a - b));
  });
  it('gives every type a label and a key format', () => {
    for (const p of PROVIDER_TYPES) {
      expect(p.label).not.toBe('');
      expect(p.keyFormat).not.toBe('');
    }
  });
  it('names the well-known labels', () => {
    expect(findProviderType(1)?.label).toBe('OpenAI');
    expect(findProviderType(14)?.label).toBe('Anthropic Claude');
    expect(findProviderType(48)?.label).toBe('xAI');
    expect(findProviderType(999)).toBeUndefined();
  });
  it('offers a balance endpoint only for OpenAI, custom, SiliconCloud and DeepSeek', () => {
    const withBalance = PROVIDER_TYPES.filter((p) => p.balance).map((p) => p.value);
    expect(withBalance.sort((a, b) => a - b)).toEqual([1, 8, 40, 43]);
  });
  it("refuses a key whose shape cannot work for its type, saying what to enter: Spark's triple, a Kling or Jimeng key without both halves, a Vidu key that is not one token", () => {
    expect(refusalOfKey(ProviderTypeId.Xunfei, 'app|secret|key')).toMatch(/APIPassword/);
    expect(refusalOfKey(ProviderTypeId.Xunfei, 'api-password')).toBeUndefined();
    for (const bad of ['only-access', 'access|', '|secret', 'a|b|c'])
      expect(refusalOfKey(ProviderTypeId.Kling, bad), bad).toMatch(/AccessKey\|SecretKey/);
    expect(refusalOfKey(ProviderTypeId.Kling, 'ak-123|sk-456')).toBeUndefined();
    for (const bad of ['AKLT-only', 'AKLT|', 'a|b|c'])
      expect(refusalOfKey(ProviderTypeId.Jimeng, bad), bad).toMatch(/AccessKey\|SecretKey/);
    expect(refusalOfKey(ProviderTypeId.Jimeng, 'AKLTabc|c2VjcmV0')).toBeUndefined();
    expect(refusalOfKey(ProviderTypeId.Vidu, 'vda_1|2')).toMatch(/Token/);
    expect(refusalOfKey(ProviderTypeId.Vidu, 'vda_123')).toBeUndefined();
    expect(refusalOfKey(ProviderTypeId.OpenAI, 'a|b')).toBeUndefined();
  });

  it('treats only the Vertex AI key as one document', () => {
    expect(PROVIDER_TYPES.filter((p) => p.keyIsDocument).map((p) => p.value)).toEqual([41]);
  });
  it('maps types to their default models', () => {
    const map = defaultModelsByType();
    expect(map[1]).toContain('gpt-4o');
    expect(map[43]).toContain('deepseek-chat');
    expect(map[8]).toEqual([]);
    expect(knownModelOwners().map((known) => known.model)).toContain('claude-3-5-sonnet-20241022');
  });
  it('offers Midjourney models the relay prices, Plus with video and edits', () => {
    const map = defaultModelsByType();
    const priced = new Set(['midjourney', ...Object.values(MjAction).map(mjModelOf)]);
    expect(map[2]).toEqual([
      'midjourney',
      'mj_imagine',
      'mj_variation',
      'mj_upscale',
      'mj_reroll',
      'mj_blend',
      'mj_describe',
    ]);
    expect(map[5]).toEqual(expect.arrayContaining([...(map[2] ?? []), 'mj_video', 'mj_edits', 'swap_face']));
    expect([...(map[2] ?? []), ...(map[5] ?? [])].filter((model) => !priced.has(model))).toEqual([]);
  });
});
