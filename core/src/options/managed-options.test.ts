import { describe, expect, it } from 'vitest';
import {
  changedMapEntries,
  overlayPriceEntries,
  splitGroupEntry,
  stripPriceEntries,
} from './managed-options.ts';
import { readOptionText } from './registry.ts';
import { shapeTextProblem, splitShapeEntry } from './shape-entries.ts';

describe('splitGroupEntry', () => {
  it.each([
    ['vip/gpt-4o', { group: 'vip', model: 'gpt-4o' }],
    ['vip/meta-llama/Llama-3', { group: 'vip', model: 'meta-llama/Llama-3' }],
    ['gpt-4o', undefined],
    ['/gpt-4o', undefined],
    ['vip/', undefined],
  ])('reads %s', (entry, expected) => {
    expect(splitGroupEntry(entry)).toEqual(expected);
  });
});

describe('overlayPriceEntries', () => {
  it('lays owned entries over a flat map, winning over its values, without changing it', () => {
    const base = Object.freeze({ a: 1, b: 2 });
    expect(
      overlayPriceEntries('ModelRatio', base, [
        { entry: 'b', value: 5 },
        { entry: 'c', value: 0 },
      ]),
    ).toEqual({ a: 1, b: 5, c: 0 });
    expect(base).toEqual({ a: 1, b: 2 });
  });

  it('lays group entries into their group, adding groups, and copies only the groups it changes', () => {
    const vip = Object.freeze({ x: 1 });
    const team = Object.freeze({ y: 2 });
    const base = Object.freeze({ vip, team });
    const out = overlayPriceEntries('GroupModelPrice', base, [
      { entry: 'vip/org/m', value: 0.5 },
      { entry: 'new/m', value: 1 },
    ]);
    expect(out).toEqual({ vip: { x: 1, 'org/m': 0.5 }, team: { y: 2 }, new: { m: 1 } });
    expect(out.team).toBe(team);
    expect(vip).toEqual({ x: 1 });
  });

  it('answers the same map when nothing is owned', () => {
    const base = { a: 1 };
    expect(overlayPriceEntries('CacheRatio', base, [])).toBe(base);
  });
});

describe('stripPriceEntries', () => {
  it('keeps the stored value of an owned entry and drops one the stored map never had', () => {
    expect(
      stripPriceEntries('ModelRatio', { owned: 5, ownedNew: 7, mine: 2 }, { owned: 3 }, [
        { entry: 'owned', value: 5 },
        { entry: 'ownedNew', value: 7 },
      ]),
    ).toEqual({ owned: 3, mine: 2 });
  });

  it('does the same inside groups, dropping a group that held only owned entries', () => {
    expect(
      stripPriceEntries(
        'GroupModelRatio',
        { vip: { m: 1, mine: 2 }, svip: { m: 1 }, team: { m: 4 } },
        { vip: { m: 9 }, team: {} },
        [
          { entry: 'vip/m', value: 1 },
          { entry: 'svip/m', value: 1 },
          { entry: 'team/m', value: 4 },
        ],
      ),
    ).toEqual({ vip: { m: 9, mine: 2 }, team: {} });
  });
});

describe('changedMapEntries', () => {
  it('names added, removed and changed entries of a flat map', () => {
    expect(changedMapEntries('{"a":1,"b":2,"c":3}', '{"a":1,"b":4,"d":5}').sort()).toEqual(['b', 'c', 'd']);
  });

  it('names group map entries as group/model', () => {
    expect(
      changedMapEntries(
        '{"vip":{"a":1,"b":2},"team":{"x":1}}',
        '{"vip":{"a":1,"b":3},"svip":{"a":1}}',
      ).sort(),
    ).toEqual(['svip/a', 'team/x', 'vip/b']);
  });

  it('treats unreadable text as an empty map', () => {
    expect(changedMapEntries('not json', '{"a":1}')).toEqual(['a']);
  });
});

// The numbers of Anthropic's Sonnet 4.5 above 200k (https://docs.anthropic.com/en/docs/about-claude/pricing:
// $6 / $22.50 beside $3 / $15, i.e. × 2 and × 1.5) and OpenAI's priority and flex tiers of GPT-5
// (https://platform.openai.com/docs/pricing: $2.50 and $0.625 input beside $1.25, × 2 and × 0.5).
describe('the price-shape maps, entry by entry', () => {
  it('lays a long-context tier over the tiers the console keeps, replacing the owned numbers only', () => {
    const base = Object.freeze({
      sonnet: Object.freeze([Object.freeze({ above: 200000, input: 9, output: 9, cache: 9 })]),
      other: [{ above: 1000, input: 2, output: 2 }],
    });
    const out = overlayPriceEntries('LongContextTiers', base, [
      { entry: 'sonnet/200000/input', value: 2 },
      { entry: 'sonnet/200000/output', value: 1.5 },
      { entry: 'sonnet/200000/cache', value: 2 },
      { entry: 'org/gemini/128000/input', value: 2 },
      { entry: 'org/gemini/128000/output', value: 1.5 },
    ]);
    expect(out).toEqual({
      sonnet: [{ above: 200000, input: 2, output: 1.5, cache: 2 }],
      other: [{ above: 1000, input: 2, output: 2 }],
      'org/gemini': [{ above: 128000, input: 2, output: 1.5 }],
    });
    expect(out.other).toBe(base.other);
    expect(base.sonnet[0]?.input).toBe(9);
  });

  it('keeps a tier the console added beside an owned one, in threshold order', () => {
    expect(
      overlayPriceEntries('LongContextTiers', { m: [{ above: 500000, input: 3, output: 3 }] }, [
        { entry: 'm/200000/input', value: 2 },
        { entry: 'm/200000/output', value: 1.5 },
      ]),
    ).toEqual({
      m: [
        { above: 200000, input: 2, output: 1.5 },
        { above: 500000, input: 3, output: 3 },
      ],
    });
  });

  it('lays service tiers and fees into the model they name, splitting at the last "/"', () => {
    expect(
      overlayPriceEntries('ServiceTierRatio', { 'gpt-5': { scale: 1 } }, [
        { entry: 'gpt-5/priority', value: 2 },
        { entry: 'openai/gpt-5/flex', value: 0.5 },
      ]),
    ).toEqual({ 'gpt-5': { scale: 1, priority: 2 }, 'openai/gpt-5': { flex: 0.5 } });
    expect(overlayPriceEntries('RequestFees', {}, [{ entry: 'claude/web_search', value: 0.01 }])).toEqual({
      claude: { web_search: 0.01 },
    });
  });

  it('stores what the console sent with the owned numbers put back as they were stored', () => {
    const sent = {
      m: [
        { above: 200000, input: 2, output: 1.5, cache: 2 },
        { above: 500000, input: 3, output: 3 },
      ],
      gone: [{ above: 100, input: 2, output: 2 }],
    };
    const stored = { m: [{ above: 200000, input: 1.8, output: 1.2 }] };
    const owned = [
      'm/200000/input',
      'm/200000/output',
      'm/200000/cache',
      'gone/100/input',
      'gone/100/output',
    ];
    expect(
      stripPriceEntries(
        'LongContextTiers',
        sent,
        stored,
        owned.map((entry) => ({ entry, value: 1 })),
      ),
    ).toEqual({
      m: [
        { above: 200000, input: 1.8, output: 1.2 },
        { above: 500000, input: 3, output: 3 },
      ],
    });
    expect(
      stripPriceEntries('ServiceTierRatio', { m: { priority: 2, flex: 0.5 } }, {}, [
        { entry: 'm/priority', value: 2 },
      ]),
    ).toEqual({ m: { flex: 0.5 } });
  });

  it('names the changed numbers of a tier list and of service tiers as their owners are named', () => {
    expect(
      changedMapEntries(
        '{"m":[{"above":200000,"input":2,"output":1.5}]}',
        '{"m":[{"above":200000,"input":2,"output":1.6},{"above":500000,"input":3,"output":3}]}',
      ).sort(),
    ).toEqual(['m/200000/output', 'm/500000/input', 'm/500000/output']);
    expect(changedMapEntries('{"m":{"priority":2}}', '{"m":{"priority":2,"flex":0.5}}')).toEqual(['m/flex']);
    expect(
      changedMapEntries(
        '{"m":[{"above":1,"input":2,"output":2}]}',
        '{"m":[{"above":1,"input":2,"output":2}]}',
      ),
    ).toEqual([]);
  });
});

describe('splitShapeEntry', () => {
  it.each([
    ['LongContextTiers', 'claude/200000/input', { model: 'claude', path: ['200000', 'input'] }],
    ['LongContextTiers', 'a/b/272000/cache', { model: 'a/b', path: ['272000', 'cache'] }],
    ['LongContextTiers', 'claude/200000/price', undefined],
    ['LongContextTiers', 'claude/0200000/input', undefined],
    ['LongContextTiers', '200000/input', undefined],
    ['ServiceTierRatio', 'gpt-5/priority', { model: 'gpt-5', path: ['priority'] }],
    ['ServiceTierRatio', 'gpt-5/Priority', undefined],
    ['RequestFees', 'claude/web_search', { model: 'claude', path: ['web_search'] }],
    ['RequestFees', 'claude/video', undefined],
    ['RequestFees', ' claude/image', undefined],
  ] as const)('reads %s[%s]', (key, entry, expected) => {
    expect(splitShapeEntry(key, entry)).toEqual(expected);
  });
});

describe('shapeTextProblem', () => {
  it('says what the option registry says, for every shape map', () => {
    for (const [key, text] of [
      ['LongContextTiers', '{"m":[{"above":200000,"input":0,"output":1.5}]}'],
      ['ServiceTierRatio', '{"m":{"Priority":2}}'],
      ['RequestFees', '{"m":{"web_search":-1}}'],
      ['RequestFees', '{'],
    ] as const) {
      const registry = readOptionText(key, text);
      expect(registry.ok).toBe(false);
      expect(shapeTextProblem(key, text)).toBe(!registry.ok && registry.message);
    }
    expect(
      shapeTextProblem('LongContextTiers', '{"m":[{"above":200000,"input":2,"output":1.5}]}'),
    ).toBeUndefined();
  });
});
