import type { PriceTables } from '../billing/ratios.ts';
import type { OptionReader } from './registry.ts';

/**
 * The price tables billing reads, from the current option values (an option store's `get`, or a reader in
 * tests): the un-grouped maps, the cache-write map and every group's own prices. One place, so a new price
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
    groupPrices: {
      modelRatio: read('GroupModelRatio'),
      completionRatio: read('GroupCompletionRatio'),
      cacheRatio: read('GroupCacheRatio'),
      cacheCreationRatio: read('GroupCreateCacheRatio'),
      modelPrice: read('GroupModelPrice'),
    },
  };
}
