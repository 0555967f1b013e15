import { queryOptions } from '@tanstack/react-query';
import type { OptionOwner } from '@turnpike/core/options/managed-options';
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

/** The resource owning a model's price, if any. */
export function priceOwnerOf(owners: readonly OptionOwner[], model: string): OptionOwner | undefined {
  return owners.find(
    (o) => o.entry === model && ['ModelRatio', 'CompletionRatio', 'CacheRatio', 'ModelPrice'].includes(o.key),
  );
}
