import { type PriceTables, type Pricing, type PricingRefusal, resolvePricing } from '../billing/ratios.ts';
import type { OptionReader } from './registry.ts';
import type { OptionStore } from './store.ts';

/**
 * The price tables billing reads, from the current option values (an option store's `get`, or a reader in
 * tests): the un-grouped maps, the cache-write map, every group's own prices and the price shapes (long-context
 * tiers, service tiers, fees; docs/adr/0042). One place, so a new price
 * option reaches every caller of `resolvePricing` at once.
 */
export function priceTablesOf(read: OptionReader): PriceTables {
  return {
    modelRatio: read('ModelRatio'),
    completionRatio: read('CompletionRatio'),
    cacheRatio: read('CacheRatio'),
    modelPrice: read('ModelPrice'),
    groupRatio: read('GroupRatio'),
    cacheCreationRatio: read('CreateCacheRatio'),
    cacheCreation1hRatio: read('CreateCache1hRatio'),
    groupPrices: {
      modelRatio: read('GroupModelRatio'),
      completionRatio: read('GroupCompletionRatio'),
      cacheRatio: read('GroupCacheRatio'),
      cacheCreationRatio: read('GroupCreateCacheRatio'),
      cacheCreation1hRatio: read('GroupCreateCache1hRatio'),
      modelPrice: read('GroupModelPrice'),
    },
    longContextTiers: read('LongContextTiers'),
    serviceTierRatio: read('ServiceTierRatio'),
    requestFees: read('RequestFees'),
  };
}

/** What a request's price depends on besides the options. */
export interface PricingQuery {
  readonly model: string;
  readonly group: string;
  /** The user's `accept_unset_model_ratio_model` setting. */
  readonly acceptUnsetModelRatio: boolean;
  readonly isRoot: boolean;
}

/** The pricing of requests, resolved once per model, group and user flags until an option changes. */
export interface PriceBook {
  pricingOf(query: PricingQuery): Pricing | PricingRefusal;
}

/** Entries kept before the book starts over: served models × groups, far below it in any installation. */
const PRICE_BOOK_LIMIT = 10_000;

/**
 * A {@link PriceBook} over an option store: `resolvePricing` reads a dozen maps per call, which the relay would
 * otherwise do for every request (make bench). Any option change empties the book (they are rare, and the price
 * of a model depends on several options); the answers are shared, so callers must not change them.
 */
export function createPriceBook(options: Pick<OptionStore, 'get' | 'onChange'>): PriceBook {
  let book = new Map<string, Pricing | PricingRefusal>();
  options.onChange(() => {
    book = new Map();
  });
  return {
    pricingOf(query) {
      const key = `${query.group}\u0000${query.model}\u0000${query.acceptUnsetModelRatio ? 1 : 0}${query.isRoot ? 1 : 0}`;
      let pricing = book.get(key);
      if (pricing === undefined) {
        pricing = resolvePricing({
          tables: priceTablesOf((name) => options.get(name)),
          selfUseMode: options.get('SelfUseModeEnabled'),
          ...query,
        });
        if (book.size >= PRICE_BOOK_LIMIT) book = new Map();
        book.set(key, pricing);
      }
      return pricing;
    },
  };
}
