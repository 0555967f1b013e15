import { describe, expect, it } from 'vitest';
import {
  changedMapEntries,
  overlayPriceEntries,
  splitGroupEntry,
  stripPriceEntries,
} from './managed-options.ts';

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
