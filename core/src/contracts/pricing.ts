import type { PricingEntry } from '../billing/pricing.ts';

export type { PricingEntry } from '../billing/pricing.ts';

/** One long-context tier as the pricing page shows it: multipliers of the model's prices past `above` prompt tokens. */
export interface PricingLongContextTier {
  above: number;
  input: number;
  output: number;
  /** Cache reads and writes; the input multiplier where the tier names none. */
  cache: number;
}

/**
 * What a model's row carries beside the reference's fields (issue 39), each only where it applies, so a client
 * that knows the reference's fields reads the same answer. Ratios are relative to the model's input price (as
 * `completion_ratio` is); fees are USD per unit, shown for the group as `model_ratio` is (times `group_ratio`).
 */
export interface PricingShapes {
  /** Cached input price / input price, where the model sells cached input. */
  cache_ratio?: number;
  /** Cache write price / input price: 5-minute writes, and writes of a provider that does not say how long. */
  create_cache_ratio?: number;
  /** 1-hour cache write price / input price (Anthropic). */
  create_cache_1h_ratio?: number;
  /** In threshold order; the highest tier the prompt passes applies to the whole call. */
  long_context_tiers?: PricingLongContextTier[];
  /** Service tier (`priority`, `flex`, …) -> multiplier of the token bill. */
  service_tier_ratio?: Record<string, number>;
  /** USD per web search and per image, added to the bill. */
  request_fees?: { web_search?: number; image?: number };
  /**
   * True where a channel whose provider runs a Batch API (OpenAI, Azure, Anthropic) serves the model in a group the
   * caller may use: its `/v1/batches` are billed at the batch price (docs/adr/0050).
   */
  batch_price?: boolean;
}

/** A row of `GET /api/pricing`. */
export type PricingModel = PricingEntry & PricingShapes;

/**
 * `GET /api/pricing`: the envelope with the model list in `data`, plus the ratios of the groups the caller may
 * use and those groups' descriptions beside it (where the reference puts them).
 */
export interface PricingResponse {
  success: true;
  message: string;
  data: PricingModel[];
  group_ratio: Record<string, number>;
  usable_group: Record<string, string>;
}
