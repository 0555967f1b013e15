/**
 * PromQL checks for the alert rules and dashboards: Prometheus' own grammar (`@prometheus-io/lezer-promql`, the
 * parser of its web UI) finds syntax errors and the metric names an expression reads.
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

export interface ParsedExpr {
  /** Where the grammar failed (character offsets), empty when the expression parses. */
  readonly errors: readonly number[];
  /** Names of the metrics the expression selects. */
  readonly metrics: ReadonlySet<string>;
}

export function parsePromql(expr: string): ParsedExpr {
  const errors: number[] = [];
  const metrics = new Set<string>();
  const tree = parser.parse(expr);
  tree.iterate({
    enter(node) {
      if (node.type.isError) errors.push(node.from);
      if (node.name === 'Identifier' && node.node.parent?.name === 'VectorSelector')
        metrics.add(expr.slice(node.from, node.to));
    },
  });
  return { errors, metrics };
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
