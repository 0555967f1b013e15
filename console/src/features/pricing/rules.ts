import { formatNumber, formatUsd } from '../../lib/format.ts';
import type { PricingEntry } from './api/pricing.ts';

/** How a model is billed (spec 03 section 9): 0 by usage (tokens × ratios), 1 a fixed price per call. */
export const BillingType = { PerToken: 0, PerCall: 1 } as const;

/** The group a visitor sees, and the fallback when the user's group is not offered. */
export const DEFAULT_GROUP = 'default';

/** Tokens per displayed price unit: prices read "per 1M tokens". */
export const TOKENS_PER_PRICE = 1_000_000;

/** The display settings from the status object that decide how money is shown. */
export interface PriceDisplay {
  /** Quota units per dollar (QuotaPerUnit). */
  quotaPerUnit: number;
  /** DisplayInCurrencyEnabled: dollars when true, quota units when false. */
  inCurrency: boolean;
}

/** A model's price in the viewed group, in dollars or in quota units as the display settings say. */
export type ModelPrice =
  | { type: 'per-token'; input: number; output: number }
  | { type: 'per-call'; perCall: number };

/**
 * The price of one model for one group ratio. A per-token model costs `ratio × groupRatio` quota per token, so
 * per 1M tokens that is `ratio × groupRatio × 1e6` quota, or that over QuotaPerUnit in dollars (ratio × 2 ×
 * groupRatio with the default 500000). Output tokens cost `completion_ratio` times more. A per-call model costs
 * `price × groupRatio` dollars, i.e. that times QuotaPerUnit in quota.
 */
export function computePrice(entry: PricingEntry, groupRatio: number, display: PriceDisplay): ModelPrice {
  const unit = display.quotaPerUnit > 0 ? display.quotaPerUnit : 500_000;
  if (entry.quota_type === BillingType.PerCall) {
    const dollars = entry.model_price * groupRatio;
    return { type: 'per-call', perCall: display.inCurrency ? dollars : dollars * unit };
  }
  const quotaPerMillion = entry.model_ratio * groupRatio * TOKENS_PER_PRICE;
  const input = display.inCurrency ? quotaPerMillion / unit : quotaPerMillion;
  return { type: 'per-token', input, output: input * entry.completion_ratio };
}

/** A price as text: `$2.5` (six significant digits, float noise dropped) or a whole number of quota units. */
export function formatPrice(value: number, inCurrency: boolean): string {
  return inCurrency ? formatUsd(value) : formatNumber(Math.round(value));
}

/** Searches per shown web-search price: providers publish it per 1,000 searches. */
export const SEARCHES_PER_PRICE = 1_000;

/**
 * A per-token model's prices beyond input and output, per 1M tokens like them (fees per 1,000 searches and per
 * image), in the viewed group's money. Each is absent (or empty) where the model does not have it.
 */
export interface ExtraPrices {
  cacheRead?: number;
  /** 5-minute cache writes, and writes of providers that do not say how long. */
  cacheWrite?: number;
  cacheWrite1h?: number;
  /** Past `above` prompt tokens, the whole call at these prices. */
  tiers: { above: number; input: number; output: number; cacheRead?: number }[];
  /** The price at each service tier the answer may report. */
  serviceTiers: { tier: string; ratio: number; input: number; output: number }[];
  webSearch?: number;
  image?: number;
}

/** The cache, long-context, service-tier and fee prices of a model for one group ratio (see {@link computePrice}). */
export function computeExtraPrices(
  entry: PricingEntry,
  groupRatio: number,
  display: PriceDisplay,
): ExtraPrices {
  const unit = display.quotaPerUnit > 0 ? display.quotaPerUnit : 500_000;
  const money = (usd: number) => (display.inCurrency ? usd : usd * unit) * groupRatio;
  const fees = entry.request_fees ?? {};
  const out: ExtraPrices = {
    tiers: [],
    serviceTiers: [],
    ...(fees.web_search !== undefined ? { webSearch: money(fees.web_search * SEARCHES_PER_PRICE) } : {}),
    ...(fees.image !== undefined ? { image: money(fees.image) } : {}),
  };
  const price = computePrice(entry, groupRatio, display);
  if (price.type !== 'per-token') return out;
  const { input, output } = price;
  const cacheRead = entry.cache_ratio === undefined ? undefined : input * entry.cache_ratio;
  if (cacheRead !== undefined) out.cacheRead = cacheRead;
  if (entry.create_cache_ratio !== undefined) out.cacheWrite = input * entry.create_cache_ratio;
  if (entry.create_cache_1h_ratio !== undefined) out.cacheWrite1h = input * entry.create_cache_1h_ratio;
  out.tiers = (entry.long_context_tiers ?? []).map((tier) => ({
    above: tier.above,
    input: input * tier.input,
    output: output * tier.output,
    ...(cacheRead !== undefined ? { cacheRead: cacheRead * tier.cache } : {}),
  }));
  out.serviceTiers = Object.entries(entry.service_tier_ratio ?? {}).map(([tier, ratio]) => ({
    tier,
    ratio,
    input: input * ratio,
    output: output * ratio,
  }));
  return out;
}

/**
 * The order of spec 03 section 9: by billing type (per-token before per-call), then names starting with "gpt"
 * first, then by name. Names compare by code point, the same order the server answers in.
 */
export function comparePricing(a: PricingEntry, b: PricingEntry): number {
  if (a.quota_type !== b.quota_type) return a.quota_type - b.quota_type;
  const aGpt = a.model_name.startsWith('gpt') ? 0 : 1;
  const bGpt = b.model_name.startsWith('gpt') ? 0 : 1;
  if (aGpt !== bGpt) return aGpt - bGpt;
  return a.model_name < b.model_name ? -1 : a.model_name > b.model_name ? 1 : 0;
}

export const sortPricing = (entries: readonly PricingEntry[]): PricingEntry[] =>
  [...entries].sort(comparePricing);

/** The model search: a case-insensitive "contains" on the name (spec 03 section 5); blank keeps every row. */
export function filterPricing(entries: readonly PricingEntry[], query: string): PricingEntry[] {
  const needle = query.trim().toLowerCase();
  if (!needle) return [...entries];
  return entries.filter((entry) => entry.model_name.toLowerCase().includes(needle));
}

/** The group to view first: the user's own group when offered, else the default group, else the first one. */
export function initialGroup(groupRatio: Readonly<Record<string, number>>, userGroup?: string): string {
  if (userGroup && userGroup in groupRatio) return userGroup;
  if (DEFAULT_GROUP in groupRatio) return DEFAULT_GROUP;
  return Object.keys(groupRatio)[0] ?? DEFAULT_GROUP;
}

/** A group's price multiplier; a group without one is priced at 1, as in billing. */
export const ratioOf = (groupRatio: Readonly<Record<string, number>>, group: string): number =>
  groupRatio[group] ?? 1;

/** Whether the viewed group has a channel serving the model. */
export const isAvailable = (entry: PricingEntry, group: string): boolean =>
  entry.enable_groups.includes(group);

/** What "copy selected" puts on the clipboard: the names in table order, comma-separated. */
export function selectedNames(entries: readonly PricingEntry[], selected: ReadonlySet<string>): string {
  return entries
    .filter((entry) => selected.has(entry.model_name))
    .map((entry) => entry.model_name)
    .join(',');
}
