import type { QuotaDataRow } from './api/data.ts';

/** How the dashboard groups hours: the DataExportDefaultTime choices. */
export const GRANULARITIES = ['hour', 'day', 'week'] as const;
export type Granularity = (typeof GRANULARITIES)[number];

export const isGranularity = (value: unknown): value is Granularity =>
  typeof value === 'string' && (GRANULARITIES as readonly string[]).includes(value);

/** How far back the first view looks for each default granularity (as the server's default window). */
export const DEFAULT_WINDOW_SECONDS: Record<Granularity, number> = {
  hour: 24 * 3600,
  day: 7 * 24 * 3600,
  week: 30 * 24 * 3600,
};

/** The longest range a user may ask of their own data (the server refuses more). */
export const SELF_MAX_SPAN_SECONDS = 30 * 24 * 3600;

/** The metrics a chart can show. */
export const METRICS = ['quota', 'tokens', 'count'] as const;
export type Metric = (typeof METRICS)[number];

export interface Totals {
  quota: number;
  tokens: number;
  count: number;
}

const emptyTotals = (): Totals => ({ quota: 0, tokens: 0, count: 0 });

function add(into: Totals, row: QuotaDataRow): void {
  into.quota += row.quota;
  into.tokens += row.token_used;
  into.count += row.count;
}

/** The start (Unix seconds, local time) of the bucket a moment falls in; weeks start on Monday. */
export function bucketStart(seconds: number, granularity: Granularity): number {
  const d = new Date(seconds * 1000);
  if (granularity === 'hour') {
    d.setMinutes(0, 0, 0);
  } else {
    d.setHours(0, 0, 0, 0);
    if (granularity === 'week') d.setDate(d.getDate() - ((d.getDay() + 6) % 7));
  }
  return Math.floor(d.getTime() / 1000);
}

/** The start of the bucket after the one starting at `start` (calendar steps, so DST days stay whole). */
export function nextBucket(start: number, granularity: Granularity): number {
  const d = new Date(start * 1000);
  if (granularity === 'hour') d.setHours(d.getHours() + 1);
  else d.setDate(d.getDate() + (granularity === 'week' ? 7 : 1));
  return Math.floor(d.getTime() / 1000);
}

/** How many buckets a range spans at a granularity; counting stops once past `limit`. */
export function bucketCount(
  start: number,
  end: number,
  granularity: Granularity,
  limit = Number.POSITIVE_INFINITY,
): number {
  let count = 0;
  for (let b = bucketStart(start, granularity); b <= end && count <= limit; b = nextBucket(b, granularity)) {
    count++;
  }
  return count;
}

export interface Bucket extends Totals {
  /** Unix seconds. */
  start: number;
  byModel: Record<string, Totals>;
}

/**
 * Rows grouped into consecutive buckets covering the whole range, empty buckets included (a gap in usage
 * shows as zero, not as a line drawn straight across it). Rows outside the range are left out.
 */
export function buildTimeline(
  rows: readonly QuotaDataRow[],
  granularity: Granularity,
  range: { start: number; end: number },
): Bucket[] {
  const buckets: Bucket[] = [];
  const index = new Map<number, Bucket>();
  for (let b = bucketStart(range.start, granularity); b <= range.end; b = nextBucket(b, granularity)) {
    const bucket: Bucket = { start: b, ...emptyTotals(), byModel: {} };
    buckets.push(bucket);
    index.set(b, bucket);
  }
  for (const row of rows) {
    const bucket = index.get(bucketStart(row.created_at, granularity));
    if (!bucket) continue;
    add(bucket, row);
    const model = bucket.byModel[row.model_name] ?? emptyTotals();
    add(model, row);
    bucket.byModel[row.model_name] = model;
  }
  return buckets;
}

export interface Summary extends Totals {
  /** Average requests per minute over the range. */
  rpm: number;
  /** Average tokens per minute over the range. */
  tpm: number;
}

/** Totals over the rows, and per-minute averages over the part of the range that has already happened. */
export function summarize(
  rows: readonly QuotaDataRow[],
  range: { start: number; end: number },
  now = Math.floor(Date.now() / 1000),
): Summary {
  const totals = emptyTotals();
  for (const row of rows) add(totals, row);
  const minutes = Math.max(1, (Math.min(range.end, now) - range.start) / 60);
  return {
    ...totals,
    rpm: Math.round((totals.count / minutes) * 100) / 100,
    tpm: Math.round((totals.tokens / minutes) * 100) / 100,
  };
}

export interface ModelTotals extends Totals {
  model: string;
}

/** Usage per model, largest first by the metric, then by name. */
export function modelBreakdown(rows: readonly QuotaDataRow[], metric: Metric): ModelTotals[] {
  const byModel = new Map<string, ModelTotals>();
  for (const row of rows) {
    const entry = byModel.get(row.model_name) ?? { model: row.model_name, ...emptyTotals() };
    add(entry, row);
    byModel.set(row.model_name, entry);
  }
  return [...byModel.values()].sort(
    (a, b) => b[metric] - a[metric] || (a.model < b.model ? -1 : a.model > b.model ? 1 : 0),
  );
}

/** The key of the series that gathers the models beyond the largest ones. */
export const OTHER_MODELS = '\u0000other';

/** The largest models by the metric, each its own series; the rest share one "other" series. */
export function stackedSeries(
  rows: readonly QuotaDataRow[],
  timeline: readonly Bucket[],
  metric: Metric,
  limit = 8,
): Array<{ key: string; values: number[] }> {
  const ranked = modelBreakdown(rows, metric).filter((m) => m[metric] > 0);
  const shown = ranked.slice(0, ranked.length > limit ? limit - 1 : limit).map((m) => m.model);
  const series = shown.map((model) => ({
    key: model,
    values: timeline.map((bucket) => bucket.byModel[model]?.[metric] ?? 0),
  }));
  if (ranked.length > shown.length) {
    const named = new Set(shown);
    series.push({
      key: OTHER_MODELS,
      values: timeline.map((bucket) =>
        Object.entries(bucket.byModel)
          .filter(([model]) => !named.has(model))
          .reduce((sum, [, totals]) => sum + totals[metric], 0),
      ),
    });
  }
  return series;
}

/** A bucket's label: "MM-DD HH:00" by the hour, "MM-DD" by the day or week (the week's Monday). */
export function bucketLabel(start: number, granularity: Granularity): string {
  const d = new Date(start * 1000);
  const p = (n: number) => String(n).padStart(2, '0');
  const day = `${p(d.getMonth() + 1)}-${p(d.getDate())}`;
  return granularity === 'hour' ? `${day} ${p(d.getHours())}:00` : day;
}

/** A bucket's tooltip heading: the full date, with the hour for hourly buckets. */
export function bucketTitle(start: number, granularity: Granularity): string {
  const d = new Date(start * 1000);
  const p = (n: number) => String(n).padStart(2, '0');
  const day = `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}`;
  return granularity === 'hour' ? `${day} ${p(d.getHours())}:00` : day;
}
