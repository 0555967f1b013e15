import type { LongContextTier, RequestFees } from '@turnpike/core/billing/price-shapes';
import { shapeTextProblem } from '@turnpike/core/options/shape-entries';
import { type BatchMode, type PriceRowInput, parseNumber } from './validation.ts';

/**
 * One model of the visual pricing editor: a fixed price per request, or ratios per token; and its price shapes
 * (issue 39): long-context tiers and service tiers of a per-token model, fees of any.
 */
export interface PriceRow {
  name: string;
  price?: number;
  ratio?: number;
  completionRatio?: number;
  /** Its `LongContextTiers` entry: multipliers of its prices past a number of prompt tokens. */
  longContext?: LongContextTier[];
  /** Its `ServiceTierRatio` entry: service tier -> multiplier of the token bill. */
  serviceTiers?: Record<string, number>;
  /** Its `RequestFees` entry: USD per search, per image. */
  fees?: RequestFees[string];
}

/** The option maps the visual editor writes: the three price maps and the three shape maps. */
export type PricingOptionKey =
  | 'ModelPrice'
  | 'ModelRatio'
  | 'CompletionRatio'
  | 'LongContextTiers'
  | 'ServiceTierRatio'
  | 'RequestFees';

/** A JSON object option as a plain object of its entries, whatever they hold; anything else is empty. */
function parseObject(text: string | undefined): Record<string, unknown> {
  try {
    const value = JSON.parse(text || '{}') as unknown;
    return value && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

/** The shape fields of a row, for rows rebuilt by the dialogs. */
export function shapesOf(row: PriceRow): Pick<PriceRow, 'longContext' | 'serviceTiers' | 'fees'> {
  return {
    ...(row.longContext ? { longContext: row.longContext } : {}),
    ...(row.serviceTiers ? { serviceTiers: row.serviceTiers } : {}),
    ...(row.fees ? { fees: row.fees } : {}),
  };
}

function parseMap(text: string | undefined): Record<string, number> {
  try {
    const value = JSON.parse(text || '{}') as unknown;
    if (!value || typeof value !== 'object' || Array.isArray(value)) return {};
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>).filter(([, v]) => typeof v === 'number'),
    ) as Record<string, number>;
  } catch {
    return {};
  }
}

/**
 * Merges the JSON options into rows sorted by name: a row per model of the three price maps, carrying its entries
 * of the shape maps. Shape entries of other keys (a `claude-*` prefix, a model priced nowhere) are no row; the
 * JSON fields edit them.
 */
export function rowsFromOptions(values: Record<string, string>): PriceRow[] {
  const price = parseMap(values.ModelPrice);
  const ratio = parseMap(values.ModelRatio);
  const completion = parseMap(values.CompletionRatio);
  const tiers = parseObject(values.LongContextTiers);
  const serviceTiers = parseObject(values.ServiceTierRatio);
  const fees = parseObject(values.RequestFees);
  const names = new Set([...Object.keys(price), ...Object.keys(ratio), ...Object.keys(completion)]);
  return [...names].sort().map((name) => ({
    name,
    ...(price[name] !== undefined ? { price: price[name] } : {}),
    ...(ratio[name] !== undefined ? { ratio: ratio[name] } : {}),
    ...(completion[name] !== undefined ? { completionRatio: completion[name] } : {}),
    ...(Array.isArray(tiers[name]) ? { longContext: tiers[name] as LongContextTier[] } : {}),
    ...(Object.hasOwn(serviceTiers, name)
      ? { serviceTiers: serviceTiers[name] as Record<string, number> }
      : {}),
    ...(Object.hasOwn(fees, name) ? { fees: fees[name] as RequestFees[string] } : {}),
  }));
}

/**
 * Back to the JSON options. A fixed price clears the ratios, the long-context tiers and the service tiers (a call
 * at a fixed price has no tokens to tier); per-token rows clear the price. In the shape maps only the entries of
 * the editor's models are rewritten (those of `values` and of `rows`, so a deleted row takes its tiers along);
 * every other entry, such as a `claude-*` prefix, is kept as `values` has it.
 */
export function optionsFromRows(
  rows: readonly PriceRow[],
  values: Record<string, string> = {},
): Record<PricingOptionKey, string> {
  const price: Record<string, number> = {};
  const ratio: Record<string, number> = {};
  const completion: Record<string, number> = {};
  const edited = new Set([...rowsFromOptions(values), ...rows].map((row) => row.name));
  const kept = (text: string | undefined) =>
    Object.fromEntries(Object.entries(parseObject(text)).filter(([name]) => !edited.has(name)));
  const tiers = kept(values.LongContextTiers);
  const serviceTiers = kept(values.ServiceTierRatio);
  const fees = kept(values.RequestFees);
  for (const row of rows) {
    if (row.fees && Object.keys(row.fees).length > 0) fees[row.name] = row.fees;
    if (row.price !== undefined) {
      price[row.name] = row.price;
      continue;
    }
    if (row.ratio !== undefined) ratio[row.name] = row.ratio;
    if (row.completionRatio !== undefined) completion[row.name] = row.completionRatio;
    if (row.longContext && row.longContext.length > 0) tiers[row.name] = row.longContext;
    if (row.serviceTiers && Object.keys(row.serviceTiers).length > 0)
      serviceTiers[row.name] = row.serviceTiers;
  }
  const text = (m: Record<string, unknown>) => JSON.stringify(m, null, 2);
  return {
    ModelPrice: text(price),
    ModelRatio: text(ratio),
    CompletionRatio: text(completion),
    LongContextTiers: text(tiers),
    ServiceTierRatio: text(serviceTiers),
    RequestFees: text(fees),
  };
}

/** Whether two JSON texts hold the same map (pretty-printing and key order aside). */
export function sameJson(a: string | undefined, b: string): boolean {
  const canonical = (text: string) => {
    const value = JSON.parse(text) as unknown;
    return value && typeof value === 'object' && !Array.isArray(value)
      ? JSON.stringify(Object.entries(value).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)))
      : JSON.stringify(value);
  };
  try {
    return canonical(a || '{}') === canonical(b);
  } catch {
    return false;
  }
}

/** A validated dialog input as a row (long-context and service tiers only on a per-token row). */
export function rowFromInput(input: PriceRowInput): PriceRow {
  const name = input.name.trim();
  const webSearch = parseNumber(input.webSearch ?? '');
  const image = parseNumber(input.image ?? '');
  const fees = {
    ...(webSearch !== null ? { web_search: webSearch } : {}),
    ...(image !== null ? { image } : {}),
  };
  const withFees = Object.keys(fees).length > 0 ? { fees } : {};
  const price = parseNumber(input.price);
  if (price !== null) return { name, price, ...withFees };
  const ratio = parseNumber(input.ratio);
  const completion = parseNumber(input.completionRatio);
  const longContext = (input.longContext ?? []).map((tier) => {
    const cache = parseNumber(tier.cache);
    return {
      above: parseNumber(tier.above) ?? 0,
      input: parseNumber(tier.input) ?? 0,
      output: parseNumber(tier.output) ?? 0,
      ...(cache !== null ? { cache } : {}),
    };
  });
  const serviceTiers = Object.fromEntries(
    (input.serviceTiers ?? []).map((tier) => [tier.tier.trim(), parseNumber(tier.ratio) ?? 0]),
  );
  return {
    name,
    ...(ratio !== null ? { ratio } : {}),
    ...(completion !== null ? { completionRatio: completion } : {}),
    ...(longContext.length > 0 ? { longContext: [...longContext].sort((a, b) => a.above - b.above) } : {}),
    ...(Object.keys(serviceTiers).length > 0 ? { serviceTiers } : {}),
    ...withFees,
  };
}

/**
 * What the option registry would say of a row's tiers, service tiers and fees (a multiplier of 0, a threshold
 * that is no whole number, two tiers at one threshold), in its words, or undefined.
 */
export function rowShapeProblem(row: PriceRow): string | undefined {
  const one = (value: unknown) => JSON.stringify({ [row.name]: value });
  return (
    (row.longContext ? shapeTextProblem('LongContextTiers', one(row.longContext)) : undefined) ??
    (row.serviceTiers ? shapeTextProblem('ServiceTierRatio', one(row.serviceTiers)) : undefined) ??
    (row.fees ? shapeTextProblem('RequestFees', one(row.fees)) : undefined)
  );
}

/** A row as the dialog's text fields. */
export function inputFromRow(row: PriceRow): PriceRowInput {
  const text = (value: number | undefined) => (value !== undefined ? String(value) : '');
  return {
    name: row.name,
    price: text(row.price),
    ratio: text(row.ratio),
    completionRatio: text(row.completionRatio),
    longContext: (row.longContext ?? []).map((tier) => ({
      above: String(tier.above),
      input: String(tier.input),
      output: String(tier.output),
      cache: text(tier.cache),
    })),
    serviceTiers: Object.entries(row.serviceTiers ?? {}).map(([tier, ratio]) => ({
      tier,
      ratio: String(ratio),
    })),
    webSearch: text(row.fees?.web_search),
    image: text(row.fees?.image),
  };
}

/** Applies a batch value to the selected rows. */
export function applyBatch(
  rows: readonly PriceRow[],
  selected: ReadonlySet<string>,
  mode: BatchMode,
  value: number,
  completion: number,
): PriceRow[] {
  return rows.map((row) => {
    if (!selected.has(row.name)) return row;
    const base = { name: row.name, ...shapesOf(row) };
    switch (mode) {
      case 'price':
        return { ...base, price: value };
      case 'ratio':
        return {
          ...base,
          ratio: value,
          ...(row.completionRatio !== undefined ? { completionRatio: row.completionRatio } : {}),
        };
      case 'completion':
        return {
          ...base,
          ...(row.ratio !== undefined ? { ratio: row.ratio } : {}),
          completionRatio: value,
        };
      default:
        return { ...base, ratio: value, completionRatio: completion };
    }
  });
}
