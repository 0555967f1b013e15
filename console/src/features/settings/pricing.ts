import { type BatchMode, type PriceRowInput, parseNumber } from './validation.ts';

/** One model of the visual pricing editor: a fixed price per request, or ratios per token. */
export interface PriceRow {
  name: string;
  price?: number;
  ratio?: number;
  completionRatio?: number;
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

/** Merges the three JSON options into rows sorted by name. */
export function rowsFromOptions(values: Record<string, string>): PriceRow[] {
  const price = parseMap(values.ModelPrice);
  const ratio = parseMap(values.ModelRatio);
  const completion = parseMap(values.CompletionRatio);
  const names = new Set([...Object.keys(price), ...Object.keys(ratio), ...Object.keys(completion)]);
  return [...names].sort().map((name) => ({
    name,
    ...(price[name] !== undefined ? { price: price[name] } : {}),
    ...(ratio[name] !== undefined ? { ratio: ratio[name] } : {}),
    ...(completion[name] !== undefined ? { completionRatio: completion[name] } : {}),
  }));
}

/** Back to the three JSON options. A fixed price clears the ratios; per-token rows clear the price. */
export function optionsFromRows(
  rows: readonly PriceRow[],
): Record<'ModelPrice' | 'ModelRatio' | 'CompletionRatio', string> {
  const price: Record<string, number> = {};
  const ratio: Record<string, number> = {};
  const completion: Record<string, number> = {};
  for (const row of rows) {
    if (row.price !== undefined) price[row.name] = row.price;
    else {
      if (row.ratio !== undefined) ratio[row.name] = row.ratio;
      if (row.completionRatio !== undefined) completion[row.name] = row.completionRatio;
    }
  }
  const text = (m: Record<string, number>) => JSON.stringify(m, null, 2);
  return { ModelPrice: text(price), ModelRatio: text(ratio), CompletionRatio: text(completion) };
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

/** A validated dialog input as a row. */
export function rowFromInput(input: PriceRowInput): PriceRow {
  const price = parseNumber(input.price);
  if (price !== null) return { name: input.name.trim(), price };
  const ratio = parseNumber(input.ratio);
  const completion = parseNumber(input.completionRatio);
  return {
    name: input.name.trim(),
    ...(ratio !== null ? { ratio } : {}),
    ...(completion !== null ? { completionRatio: completion } : {}),
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
    switch (mode) {
      case 'price':
        return { name: row.name, price: value };
      case 'ratio':
        return {
          name: row.name,
          ratio: value,
          ...(row.completionRatio !== undefined ? { completionRatio: row.completionRatio } : {}),
        };
      case 'completion':
        return {
          name: row.name,
          ...(row.ratio !== undefined ? { ratio: row.ratio } : {}),
          completionRatio: value,
        };
      default:
        return { name: row.name, ratio: value, completionRatio: completion };
    }
  });
}
