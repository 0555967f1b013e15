/**
 * A Prometheus histogram for the relay's hot path: each label set is a series object the caller keeps, so an
 * observation is a bucket search and three additions (prom-client's own Histogram hashes the label object on every
 * observation; docs/adr/0009-metrics.md).
 */
import type { Histogram, Registry } from 'prom-client';

/** One label set of a {@link SeriesHistogram}: bucket counts (not cumulative), sum and count. */
export interface HistogramSeries {
  readonly labels: Record<string, string>;
  readonly counts: Float64Array;
  sum: number;
  count: number;
}

/**
 * A Prometheus histogram whose series are objects the caller keeps, so an observation is a bucket search and
 * three additions (prom-client's own Histogram hashes the label object on every observation). It is registered
 * on the prom-client registry, which renders it like any other histogram.
 */
export class SeriesHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly all: HistogramSeries[] = [];
  private readonly bounds: readonly number[];
  private readonly boundLabels: readonly string[];
  readonly name: string;
  readonly help: string;

  constructor(name: string, help: string, bounds: readonly number[]) {
    this.name = name;
    this.help = help;
    this.bounds = bounds;
    this.boundLabels = [...bounds.map(String), '+Inf'];
  }

  series(labels: Record<string, string>): HistogramSeries {
    const series = { labels, counts: new Float64Array(this.bounds.length + 1), sum: 0, count: 0 };
    this.all.push(series);
    return series;
  }

  observe(series: HistogramSeries, value: number): void {
    const { bounds } = this;
    let i = 0;
    while (i < bounds.length && value > (bounds[i] as number)) i += 1;
    series.counts[i] = (series.counts[i] as number) + 1;
    series.sum += value;
    series.count += 1;
  }

  reset(): void {
    for (const series of this.all) {
      series.counts.fill(0);
      series.sum = 0;
      series.count = 0;
    }
  }

  async get() {
    const values: { metricName: string; labels: Record<string, string>; value: number }[] = [];
    for (const series of this.all) {
      let cumulative = 0;
      for (let i = 0; i < series.counts.length; i += 1) {
        cumulative += series.counts[i] as number;
        values.push({
          metricName: `${this.name}_bucket`,
          labels: { ...series.labels, le: this.boundLabels[i] as string },
          value: cumulative,
        });
      }
      values.push({ metricName: `${this.name}_sum`, labels: series.labels, value: series.sum });
      values.push({ metricName: `${this.name}_count`, labels: series.labels, value: series.count });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }
}

/** A {@link SeriesHistogram} registered on `registry`, which renders it like any other histogram. */
export function registerSeriesHistogram(
  registry: Registry,
  name: string,
  help: string,
  buckets: readonly number[],
): SeriesHistogram {
  const metric = new SeriesHistogram(name, help, buckets);
  // The registry renders any object with prom-client's metric shape; its type names only its own classes.
  registry.registerMetric(metric as unknown as Histogram);
  return metric;
}
