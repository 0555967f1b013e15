import { queryOptions } from '@tanstack/react-query';
import type { OptionOwner, PriceOptionKey } from '@turnpike/core/options/managed-options';
import { isShapeOptionKey, SHAPE_OPTION_KEYS, splitShapeEntry } from '@turnpike/core/options/shape-entries';
import { api } from '../../../lib/api.ts';

export type { OptionOwner };

/**
 * Option values Kubernetes resources own (GET /api/option/owners): a GatewayOption's whole options, a ModelPrice's
 * price map entries. Read-only in the console (docs/adr/0017). A server without the endpoint means "none".
 */
export const optionOwnersQuery = queryOptions({
  queryKey: ['options', 'owners'],
  queryFn: async (): Promise<OptionOwner[]> => {
    try {
      return (await api.get<OptionOwner[]>('/api/option/owners', { silent: true })) ?? [];
    } catch {
      return [];
    }
  },
});

/**
 * The price maps keyed by model, whose owned entries are named by the model (core's `MODEL_PRICE_OPTION_KEYS`,
 * repeated here because that module carries the database code; option-owners.test.ts checks they agree).
 */
export const MODEL_PRICE_KEYS = [
  'ModelRatio',
  'CompletionRatio',
  'CacheRatio',
  'ModelPrice',
  'CreateCacheRatio',
  'CreateCache1hRatio',
] as const satisfies readonly PriceOptionKey[];

/** The group maps, whose owned entries are named `group/model` (core's `GROUP_PRICE_OPTION_KEYS`). */
export const GROUP_PRICE_KEYS = [
  'GroupModelRatio',
  'GroupCompletionRatio',
  'GroupCacheRatio',
  'GroupCreateCacheRatio',
  'GroupCreateCache1hRatio',
  'GroupModelPrice',
] as const satisfies readonly PriceOptionKey[];

/**
 * The resource owning one of a model's prices without groups (input, output, cache read or write), or a number
 * of its long-context tiers, service tiers or fees, if any.
 */
export function priceOwnerOf(owners: readonly OptionOwner[], model: string): OptionOwner | undefined {
  return owners.find((o) =>
    isShapeOptionKey(o.key)
      ? splitShapeEntry(o.key, o.entry)?.model === model
      : o.entry === model && (MODEL_PRICE_KEYS as readonly string[]).includes(o.key),
  );
}

/**
 * The entries of one price map that resources own (`gpt-4o`, `vip/gpt-4o` in a group map,
 * `claude-sonnet-4-5/200000/input` in a shape map), by name.
 */
export function ownedEntriesOf(owners: readonly OptionOwner[], key: string): OptionOwner[] {
  const isPriceMap = (
    [...MODEL_PRICE_KEYS, ...GROUP_PRICE_KEYS, ...SHAPE_OPTION_KEYS] as readonly string[]
  ).includes(key);
  if (!isPriceMap) return [];
  return owners
    .filter((o) => o.key === key && o.entry !== '')
    .sort((a, b) => (a.entry < b.entry ? -1 : a.entry > b.entry ? 1 : 0));
}
