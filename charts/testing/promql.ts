/**
 * What the alert rules and dashboards read, found with Prometheus' own grammar (`@prometheus-io/lezer-promql`, the
 * parser of its web UI), so that each metric name can be checked against what Turnpike serves.
 */
import { parser } from '@prometheus-io/lezer-promql';

/** What Grafana puts in place of its variables: a range for `$__rate_interval` and kin, the chosen namespace. */
export interface GrafanaVariables {
  /** A PromQL duration (`5m`) for `$__rate_interval`, `$__interval` and `$__range`. */
  readonly interval: string;
  /** The `$namespace` dashboard variable: a regular expression, as Grafana writes a multi-value selection. */
  readonly namespace: string;
}

/** An expression with Grafana's variables replaced, by default with values of the right shape for parsing. */
export function withGrafanaVariables(
  expr: string,
  values: GrafanaVariables = { interval: '5m', namespace: '.*' },
): string {
  return expr
    .replace(/\$__rate_interval|\$__interval|\$__range/g, values.interval)
    .replace(/\$\{?namespace\}?/g, values.namespace);
}

/**
 * Names of the metrics an expression selects. Whether Prometheus accepts the expression is its own business
 * (charts/observability.int.test.ts asks a real one); a syntax error here only loses names.
 */
export function metricsRead(expr: string): Set<string> {
  const metrics = new Set<string>();
  parser.parse(expr).iterate({
    enter(node) {
      if (node.name === 'Identifier' && node.node.parent?.name === 'VectorSelector')
        metrics.add(expr.slice(node.from, node.to));
    },
  });
  return metrics;
}

/** Metric names an exposition (`/metrics` text) declares, by their `# TYPE` lines, with a histogram's series. */
export function exposedMetricNames(exposition: string): Set<string> {
  const names = new Set<string>();
  for (const line of exposition.split('\n')) {
    const match = /^# TYPE (\S+) (\S+)/.exec(line);
    if (!match) continue;
    const [, name, type] = match as unknown as [string, string, string];
    names.add(name);
    if (type === 'histogram' || type === 'summary')
      for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${name}${suffix}`);
  }
  return names;
}
