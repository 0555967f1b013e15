import { describe, expect, it } from 'vitest';
import { isPricingRefusal } from '../billing/ratios.ts';
import { createPriceBook } from './price-tables.ts';
import { defaultOptionValue, type OptionKey } from './registry.ts';
import type { OptionChangeListener, OptionStore } from './store.ts';

/** An option store of defaults with some values set by hand, and its change listeners. */
function fakeOptions(values: Partial<Record<OptionKey, unknown>>) {
  const listeners: OptionChangeListener[] = [];
  let reads = 0;
  const options: Pick<OptionStore, 'get' | 'onChange'> = {
    get: ((key: OptionKey) => {
      reads += 1;
      return key in values ? values[key] : defaultOptionValue(key);
    }) as OptionStore['get'],
    onChange(listener) {
      listeners.push(listener);
      return () => {};
    },
  };
  const change = (key: OptionKey, value: unknown) => {
    values[key] = value;
    for (const listener of listeners) listener([key]);
  };
  return { options, change, reads: () => reads };
}

const query = { model: 'm-1', group: 'default', acceptUnsetModelRatio: false, isRoot: false };

describe('price book', () => {
  it('resolves a model and group once and then answers from memory', () => {
    const { options, reads } = fakeOptions({
      ModelRatio: { 'm-1': 2 },
      GroupRatio: { default: 1, vip: 0.5 },
    });
    const book = createPriceBook(options);
    const first = book.pricingOf(query);
    const readsAfterFirst = reads();
    expect(first).toMatchObject({ kind: 'per-token', modelRatio: 2, groupRatio: 1 });
    expect(book.pricingOf({ ...query })).toBe(first);
    expect(reads()).toBe(readsAfterFirst);
    expect(book.pricingOf({ ...query, group: 'vip' })).toMatchObject({ groupRatio: 0.5 });
  });

  it('serves a changed price as soon as the store announces the change', () => {
    const { options, change } = fakeOptions({ ModelRatio: { 'm-1': 2 } });
    const book = createPriceBook(options);
    expect(book.pricingOf(query)).toMatchObject({ modelRatio: 2 });
    change('ModelRatio', { 'm-1': 3 });
    expect(book.pricingOf(query)).toMatchObject({ modelRatio: 3 });
    change('ModelPrice', { 'm-1': 0.05 });
    expect(book.pricingOf(query)).toMatchObject({ kind: 'per-call', modelPrice: 0.05 });
  });

  it('keeps the answers of users who accept unpriced models apart from those who do not', () => {
    const { options } = fakeOptions({ ModelRatio: {} });
    const book = createPriceBook(options);
    const unpriced = { ...query, model: 'not-priced' };
    expect(isPricingRefusal(book.pricingOf(unpriced))).toBe(true);
    expect(book.pricingOf({ ...unpriced, acceptUnsetModelRatio: true })).toMatchObject({
      isUnsetRatio: true,
    });
    const root = book.pricingOf({ ...unpriced, isRoot: true });
    const user = book.pricingOf(unpriced);
    expect(isPricingRefusal(root) && isPricingRefusal(user) && root.message !== user.message).toBe(true);
  });

  it('follows self-use mode, which prices every model', () => {
    const { options, change } = fakeOptions({ ModelRatio: {} });
    const book = createPriceBook(options);
    const unpriced = { ...query, model: 'not-priced' };
    expect(isPricingRefusal(book.pricingOf(unpriced))).toBe(true);
    change('SelfUseModeEnabled', true);
    expect(book.pricingOf(unpriced)).toMatchObject({ kind: 'per-token', isUnsetRatio: true });
  });

  it('prices with the long-context tiers, service tiers and fees the options hold', () => {
    const { options, change } = fakeOptions({ ModelRatio: { 'm-1': 2 } });
    const book = createPriceBook(options);
    expect(book.pricingOf(query)).not.toHaveProperty('shapes');
    change('LongContextTiers', { 'm-*': [{ above: 1000, input: 2, output: 1.5 }] });
    change('ServiceTierRatio', { 'm-1': { priority: 2 } });
    change('RequestFees', { 'm-1': { web_search: 0.01 } });
    expect(book.pricingOf(query)).toMatchObject({
      shapes: {
        longContextTiers: [{ above: 1000, input: 2, output: 1.5 }],
        serviceTiers: { priority: 2 },
        fees: { web_search: 0.01 },
      },
    });
  });
});
