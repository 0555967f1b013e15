import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
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
    [
      'a cache-write ratio',
      { models: ['m'], ratio: { model: '1.5', cacheRead: '0.1', cacheWrite: '1.25' } },
      ['ModelRatio[m]=1.5', 'CacheRatio[m]=0.1', 'CreateCacheRatio[m]=1.25'],
    ],
    // USD 3 / 1M input: ratio 1.5; cache write 3.75 / 3 = 1.25; cache read 0.3 / 3 = 0.1
    [
      'a cache-write price',
      { models: ['claude'], price: { input: '3', output: '15', cacheRead: '0.3', cacheWrite: '3.75' } },
      [
        'ModelRatio[claude]=1.5',
        'CompletionRatio[claude]=5',
        'CacheRatio[claude]=0.1',
        'CreateCacheRatio[claude]=1.25',
      ],
    ],
    // Claude Sonnet 4.5 at https://docs.anthropic.com/en/docs/about-claude/pricing: input $3, 5-minute write
    // $3.75, 1-hour write $6 per million: 3.75 / 3 = 1.25, 6 / 3 = 2.
    [
      'a 1-hour cache-write price beside the 5-minute one',
      { models: ['claude'], price: { input: '3', cacheWrite: '3.75', cacheWrite1h: '6' } },
      ['ModelRatio[claude]=1.5', 'CreateCacheRatio[claude]=1.25', 'CreateCache1hRatio[claude]=2'],
    ],
    [
      'a 1-hour cache-write ratio for a group',
      { models: ['claude'], groups: ['vip'], ratio: { model: '1.5', cacheWrite1h: '2' } },
      ['GroupModelRatio[vip/claude]=1.5', 'GroupCreateCache1hRatio[vip/claude]=2'],
    ],
    [
      'a free model with free cache writes',
      { models: ['m'], price: { input: '0', cacheWrite: '0' } },
      ['ModelRatio[m]=0'],
    ],
    [
      'prices for some groups only, in the group maps',
      { models: ['m', 'org/m2'], groups: ['vip', 'team'], ratio: { model: '0.5', cacheWrite: '2' } },
      [
        'GroupModelRatio[vip/m]=0.5',
        'GroupCreateCacheRatio[vip/m]=2',
        'GroupModelRatio[vip/org/m2]=0.5',
        'GroupCreateCacheRatio[vip/org/m2]=2',
        'GroupModelRatio[team/m]=0.5',
        'GroupCreateCacheRatio[team/m]=2',
        'GroupModelRatio[team/org/m2]=0.5',
        'GroupCreateCacheRatio[team/org/m2]=2',
      ],
    ],
    [
      'token prices for a group',
      { models: ['m'], groups: ['vip'], price: { input: '1', output: '4', cacheRead: '0.25' } },
      ['GroupModelRatio[vip/m]=0.5', 'GroupCompletionRatio[vip/m]=4', 'GroupCacheRatio[vip/m]=0.25'],
    ],
    [
      'a per-call price for a group, groups named once',
      { models: ['m'], groups: ['vip', ' vip'], price: { perCall: '0.02' } },
      ['GroupModelPrice[vip/m]=0.02'],
    ],
    [
      'an empty group list as every group',
      { models: ['m'], groups: [], ratio: { model: '1' } },
      ['ModelRatio[m]=1'],
    ],
    // Claude Sonnet 4.5 (https://docs.anthropic.com/en/docs/about-claude/pricing): above 200K prompt tokens
    // $6 input and $22.50 output beside $3 and $15 (× 2, × 1.5), cache reads $0.60 beside $0.30 (× 2); web search
    // $10 per 1,000 searches.
    [
      'long-context tiers and a web-search fee, the cache multiplier written out',
      {
        models: ['claude-sonnet-4-5', 'claude-sonnet-4'],
        price: { input: '3', output: '15' },
        longContext: [{ above: 200000, input: '2', output: '1.5' }],
        fees: { webSearch: '0.01' },
      },
      [
        'ModelRatio[claude-sonnet-4-5]=1.5',
        'CompletionRatio[claude-sonnet-4-5]=5',
        'ModelRatio[claude-sonnet-4]=1.5',
        'CompletionRatio[claude-sonnet-4]=5',
        'LongContextTiers[claude-sonnet-4-5/200000/input]=2',
        'LongContextTiers[claude-sonnet-4-5/200000/output]=1.5',
        'LongContextTiers[claude-sonnet-4-5/200000/cache]=2',
        'RequestFees[claude-sonnet-4-5/web_search]=0.01',
        'LongContextTiers[claude-sonnet-4/200000/input]=2',
        'LongContextTiers[claude-sonnet-4/200000/output]=1.5',
        'LongContextTiers[claude-sonnet-4/200000/cache]=2',
        'RequestFees[claude-sonnet-4/web_search]=0.01',
      ],
    ],
    // GPT-5 (https://platform.openai.com/docs/pricing): $1.25 / $10 standard, $2.50 / $20 priority (× 2), $0.625 /
    // $5 flex (× 0.5).
    [
      'service tiers in ratio mode, and a cache multiplier of its own',
      {
        models: ['gpt-5'],
        ratio: { model: '0.625', completion: '8' },
        serviceTiers: { priority: '2', flex: '0.5' },
        longContext: [{ above: 272000, input: '2', output: '1.5', cache: '1.25' }],
      },
      [
        'ModelRatio[gpt-5]=0.625',
        'CompletionRatio[gpt-5]=8',
        'LongContextTiers[gpt-5/272000/input]=2',
        'LongContextTiers[gpt-5/272000/output]=1.5',
        'LongContextTiers[gpt-5/272000/cache]=1.25',
        'ServiceTierRatio[gpt-5/priority]=2',
        'ServiceTierRatio[gpt-5/flex]=0.5',
      ],
    ],
    [
      'a per-image fee beside a per-call price',
      { models: ['img'], price: { perCall: '0.04' }, fees: { image: '0.039' } },
      ['ModelPrice[img]=0.04', 'RequestFees[img/image]=0.039'],
    ],
  ])('%s', (_name, spec, expected) => {
    expect(entries(spec)).toEqual(expected);
  });

  it.each<[string, ModelPriceSpec, string]>([
    ['a group name with a slash', { models: ['m'], groups: ['a/b'], price: { perCall: '1' } }, 'InvalidSpec'],
    [
      'a cache-write price beside a per-call one',
      { models: ['m'], price: { perCall: '1', cacheWrite: '1' } },
      'InvalidSpec',
    ],
    [
      'a paid cache write on a free input',
      { models: ['m'], price: { input: '0', cacheWrite: '1' } },
      'InvalidSpec',
    ],
    [
      'a float-looking cache write',
      { models: ['m'], ratio: { model: '1', cacheWrite: '1.25e0' } },
      'InvalidSpec',
    ],
    ['both modes', { models: ['m'], ratio: { model: '1' }, price: { perCall: '1' } }, 'InvalidSpec'],
    ['a float-looking text', { models: ['m'], ratio: { model: '1e3' } }, 'InvalidSpec'],
    [
      'more decimals than a price holds',
      { models: ['m'], ratio: { model: '0.0000000000001' } },
      'InvalidSpec',
    ],
    ['a paid output on a free input', { models: ['m'], price: { input: '0', output: '1' } }, 'InvalidSpec'],
    [
      'a paid 1-hour cache write on a free input',
      { models: ['m'], price: { input: '0', cacheWrite1h: '1' } },
      'InvalidSpec',
    ],
    [
      'a 1-hour cache write beside a per-call price',
      { models: ['m'], price: { perCall: '1', cacheWrite1h: '1' } },
      'InvalidSpec',
    ],
    [
      'long-context tiers for some groups',
      {
        models: ['m'],
        groups: ['vip'],
        ratio: { model: '1' },
        longContext: [{ above: 1, input: '2', output: '2' }],
      },
      'InvalidSpec: longContext, serviceTiers and fees apply to every group',
    ],
    [
      'service tiers on a per-call price',
      { models: ['m'], price: { perCall: '1' }, serviceTiers: { priority: '2' } },
      'InvalidSpec: a per-call price has no tokens',
    ],
    [
      'two tiers at the same threshold',
      {
        models: ['m'],
        ratio: { model: '1' },
        longContext: [
          { above: 200000, input: '2', output: '1.5' },
          { above: 200000, input: '3', output: '2' },
        ],
      },
      'InvalidSpec: two long-context tiers start at the same number of tokens',
    ],
    [
      'a long-context multiplier of 0',
      { models: ['m'], ratio: { model: '1' }, longContext: [{ above: 1000, input: '0', output: '1' }] },
      'InvalidSpec: longContext[0].input must be more than 0',
    ],
    [
      'a threshold that is no whole number',
      { models: ['m'], ratio: { model: '1' }, longContext: [{ above: 1.5, input: '2', output: '2' }] },
      'InvalidSpec: longContext[0].above',
    ],
    [
      'a service tier in capitals',
      { models: ['m'], ratio: { model: '1' }, serviceTiers: { Priority: '2' } },
      'InvalidSpec: serviceTiers.Priority',
    ],
    [
      'a fee that is no decimal',
      { models: ['m'], ratio: { model: '1' }, fees: { webSearch: '$0.01' } },
      'InvalidSpec: fees.webSearch',
    ],
  ])('refuses %s', (_name, spec, reason) => {
    expect(entries(spec)).toMatch(new RegExp(`^${reason.replace(/[[\]().$]/g, '\\$&')}`));
  });
});

describe('deploy/examples/model-prices.yaml', () => {
  it('gives every example price entries, none refused', () => {
    const text = readFileSync(
      new URL('../../../../deploy/examples/model-prices.yaml', import.meta.url),
      'utf8',
    );
    const prices = parseAllDocuments(text).map((d) => d.toJS() as ModelPriceResource);
    expect(prices.length).toBeGreaterThan(0);
    for (const price of prices)
      expect(desiredPrices(price), price.metadata.name).toMatchObject({
        ok: true,
        values: expect.any(Array),
      });
    const enterprise = prices.find((p) => p.metadata.name === 'gpt-4o-enterprise') as ModelPriceResource;
    expect(entries(enterprise.spec)).toContain('GroupModelRatio[partner/gpt-4o]=1');
  });
});
