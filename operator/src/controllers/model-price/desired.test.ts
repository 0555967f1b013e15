import { describe, expect, it } from 'vitest';
import type { ModelPriceResource, ModelPriceSpec } from '../../api/v1alpha1.ts';
import { desiredPrices } from './desired.ts';

const resource = (spec: ModelPriceSpec): ModelPriceResource => ({
  apiVersion: 'turnpike.dev/v1alpha1',
  kind: 'ModelPrice',
  metadata: { name: 'p', namespace: 'ns', generation: 1 },
  spec,
});

/** The entries as `Key[model]=value` for compact tables. */
function entries(spec: ModelPriceSpec): string[] | string {
  const result = desiredPrices(resource(spec));
  if (!result.ok) return `${result.reason}: ${result.message}`;
  return result.values.map((v) => `${v.key}[${v.entry}]=${'number' in v ? v.number : v.text}`);
}

describe('desired price entries', () => {
  it.each<[string, ModelPriceSpec, string[]]>([
    [
      'ratio mode',
      { models: ['m'], ratio: { model: '0.75', completion: '4', cacheRead: '0.1' } },
      ['ModelRatio[m]=0.75', 'CompletionRatio[m]=4', 'CacheRatio[m]=0.1'],
    ],
    ['ratio mode, model ratio only', { models: ['m'], ratio: { model: '15' } }, ['ModelRatio[m]=15']],
    // USD 2.50 / 1M input = ratio 1.25; output 10 / input 2.5 = 4; cached 1.25 / 2.5 = 0.5
    [
      'token prices',
      { models: ['m'], price: { input: '2.5', output: '10', cacheRead: '1.25' } },
      ['ModelRatio[m]=1.25', 'CompletionRatio[m]=4', 'CacheRatio[m]=0.5'],
    ],
    [
      'prices that are no exact binary fractions',
      { models: ['m'], price: { input: '0.3', output: '0.9' } },
      ['ModelRatio[m]=0.15', 'CompletionRatio[m]=3'],
    ],
    [
      'a third, rounded at 12 decimals',
      { models: ['m'], price: { input: '3', output: '1' } },
      ['ModelRatio[m]=1.5', 'CompletionRatio[m]=0.333333333333'],
    ],
    ['a free model', { models: ['m'], price: { input: '0' } }, ['ModelRatio[m]=0']],
    [
      'a per-call price',
      { models: ['a', 'b'], price: { perCall: '0.04' } },
      ['ModelPrice[a]=0.04', 'ModelPrice[b]=0.04'],
    ],
    ['duplicate model names once', { models: ['a', 'a'], price: { perCall: '1' } }, ['ModelPrice[a]=1']],
  ])('%s', (_name, spec, expected) => {
    expect(entries(spec)).toEqual(expected);
  });

  it.each<[string, ModelPriceSpec, string]>([
    ['per-group prices', { models: ['m'], groups: ['vip'], price: { perCall: '1' } }, 'Unsupported'],
    ['cache-write prices', { models: ['m'], ratio: { model: '1', cacheWrite: '1.25' } }, 'Unsupported'],
    ['both modes', { models: ['m'], ratio: { model: '1' }, price: { perCall: '1' } }, 'InvalidSpec'],
    ['a float-looking text', { models: ['m'], ratio: { model: '1e3' } }, 'InvalidSpec'],
    [
      'more decimals than a price holds',
      { models: ['m'], ratio: { model: '0.0000000000001' } },
      'InvalidSpec',
    ],
    ['a paid output on a free input', { models: ['m'], price: { input: '0', output: '1' } }, 'InvalidSpec'],
  ])('refuses %s', (_name, spec, reason) => {
    expect(entries(spec)).toMatch(new RegExp(`^${reason}:`));
  });
});
