import { queryOptions } from '@tanstack/react-query';
import type { PricingModel, PricingResponse } from '@turnpike/core/contracts/pricing';
import { ApiError, requestEnvelope } from '../../../lib/api.ts';

/** A row of the pricing page: the reference's fields, and the cache, tier and fee prices where they apply. */
export type PricingEntry = PricingModel;

/** What the pricing page reads: the models, and the ratio and description of each group the caller may view. */
export interface PricingData {
  models: PricingEntry[];
  groupRatio: Record<string, number>;
  groupDesc: Record<string, string>;
}

/**
 * GET /api/pricing. The group maps sit beside `data` in the envelope, so the whole envelope is read. Public: the
 * session cookie, when there is one, adds the user's group.
 */
export async function fetchPricing(): Promise<PricingData> {
  const body = await requestEnvelope<PricingEntry[], Omit<PricingResponse, 'data'>>('GET', '/api/pricing');
  if (!Array.isArray(body.data)) throw new ApiError(body.message ?? '', 200);
  return {
    models: body.data,
    groupRatio: body.group_ratio ?? {},
    groupDesc: body.usable_group ?? {},
  };
}

/** Keyed by the signed-in user (0 for a visitor): signing in adds the user's own group to the answer. */
export const pricingQuery = (userId: number) =>
  queryOptions({
    queryKey: ['pricing', userId],
    queryFn: fetchPricing,
    staleTime: 60_000,
  });
