import type { PricingEntry } from '../billing/pricing.ts';

export type { PricingEntry } from '../billing/pricing.ts';

/**
 * `GET /api/pricing`: the envelope with the model list in `data`, plus the ratios of the groups the caller may
 * use and those groups' descriptions beside it (where the reference puts them).
 */
export interface PricingResponse {
  success: true;
  message: string;
  data: PricingEntry[];
  group_ratio: Record<string, number>;
  usable_group: Record<string, string>;
}
