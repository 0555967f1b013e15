import { GROUP_PRICE_OPTION_KEYS, MODEL_PRICE_OPTION_KEYS } from '@turnpike/core/options/managed-options';
import { describe, expect, it } from 'vitest';
import {
  GROUP_PRICE_KEYS,
  MODEL_PRICE_KEYS,
  type OptionOwner,
  ownedEntriesOf,
  priceOwnerOf,
} from './option-owners.ts';

const owner = (key: string, entry: string, name = 'prices'): OptionOwner => ({
  key,
  entry,
  kind: 'ModelPrice',
  namespace: 'team-a',
  name,
  generation: 1,
});

describe('price owners', () => {
  it("names the same price maps as the core's owned-entry writer", () => {
    expect([...MODEL_PRICE_KEYS]).toEqual([...MODEL_PRICE_OPTION_KEYS]);
    expect([...GROUP_PRICE_KEYS]).toEqual([...GROUP_PRICE_OPTION_KEYS]);
  });

  it("finds a model's owner in any map without groups, the cache-write map included, never in a group map", () => {
    const owners = [owner('CreateCacheRatio', 'claude-3', 'cache'), owner('GroupModelRatio', 'vip/gpt-4o')];
    expect(priceOwnerOf(owners, 'claude-3')?.name).toBe('cache');
    // vip's own price is not the model's price without groups: that row stays the console's.
    expect(priceOwnerOf(owners, 'gpt-4o')).toBeUndefined();
  });

  it("finds a model's owner by a number of its long-context tiers, service tiers or fees", () => {
    const owners = [
      owner('LongContextTiers', 'org/claude/200000/input', 'tiers'),
      owner('ServiceTierRatio', 'gpt-5/priority', 'tiers-openai'),
    ];
    expect(priceOwnerOf(owners, 'org/claude')?.name).toBe('tiers');
    expect(priceOwnerOf(owners, 'org')).toBeUndefined();
    expect(priceOwnerOf(owners, 'gpt-5')?.name).toBe('tiers-openai');
    expect(ownedEntriesOf(owners, 'LongContextTiers').map((o) => o.entry)).toEqual([
      'org/claude/200000/input',
    ]);
  });

  it('lists the owned entries of one price map by name, and nothing for a whole option', () => {
    const owners = [
      owner('GroupModelPrice', 'vip/gpt-4o'),
      owner('GroupModelPrice', 'svip/gpt-4o'),
      owner('GroupModelRatio', 'vip/claude-3'),
      { ...owner('SystemName', ''), kind: 'GatewayOption' as const },
    ];
    expect(ownedEntriesOf(owners, 'GroupModelPrice').map((o) => o.entry)).toEqual([
      'svip/gpt-4o',
      'vip/gpt-4o',
    ]);
    expect(ownedEntriesOf(owners, 'GroupCacheRatio')).toEqual([]);
    expect(ownedEntriesOf(owners, 'SystemName')).toEqual([]);
  });
});
