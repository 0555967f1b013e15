/**
 * The alert rules (deploy/prometheus) and Grafana dashboards (deploy/grafana) against what Turnpike exposes: every
 * expression parses with Prometheus' own PromQL grammar, and every metric it reads is served by a running relay's
 * /metrics (scraped here after real traffic) or is an operator metric of the agreed names, or comes from
 * kube-state-metrics.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { type FakeOpenAi, startFakeOpenAi } from '../relay/src/testing/fake-openai.ts';
import { createRelayTestApp, type RelayTestApp } from '../relay/src/testing/relay-test-app.ts';
import { exposedMetricNames, parsePromql, withoutGrafanaVariables } from './testing/promql.ts';

const DEPLOY = join(import.meta.dirname, '..', 'deploy');

/**
 * The operator's metrics as agreed with its author (operator/src is being written beside this chart): the
 * operator dashboard and alerts may read these and no other `turnpike_operator_*` name.
 */
const OPERATOR_METRICS = [
  'turnpike_operator_reconcile_total',
  'turnpike_operator_reconcile_duration_seconds_bucket',
  'turnpike_operator_reconcile_duration_seconds_sum',
  'turnpike_operator_reconcile_duration_seconds_count',
  'turnpike_operator_queue_depth',
  'turnpike_operator_leader',
  'turnpike_operator_resources',
  'turnpike_operator_watch_restarts_total',
];
/** Metrics of the cluster itself (kube-state-metrics), for the pod-restart alert and panel. */
const CLUSTER_METRICS = ['kube_pod_container_status_restarts_total'];

interface Rule {
  readonly alert?: string;
  readonly record?: string;
  readonly expr: string;
  readonly for?: string;
  readonly labels?: Record<string, string>;
  readonly annotations?: Record<string, string>;
}
const rules = (
  parse(readFileSync(join(DEPLOY, 'prometheus', 'turnpike-rules.yaml'), 'utf8')) as {
    groups: { name: string; rules: Rule[] }[];
  }
).groups.flatMap((group) => group.rules);

interface Panel {
  readonly id: number;
  readonly type: string;
  readonly title: string;
  readonly gridPos: { x: number; y: number; w: number; h: number };
  readonly targets?: { expr: string }[];
}
interface Dashboard {
  readonly uid: string;
  readonly title: string;
  readonly panels: Panel[];
  readonly templating: { list: { name: string; query: unknown }[] };
}
const dashboards = readdirSync(join(DEPLOY, 'grafana'))
  .filter((name) => name.endsWith('.json'))
  .map((name) => JSON.parse(readFileSync(join(DEPLOY, 'grafana', name), 'utf8')) as Dashboard);

/** Every PromQL expression of the dashboards, named by dashboard and panel. */
const dashboardExprs = dashboards.flatMap((dashboard) =>
  dashboard.panels.flatMap((panel) =>
    (panel.targets ?? []).map((target) => ({
      where: `${dashboard.title} / ${panel.title}`,
      expr: withoutGrafanaVariables(target.expr),
    })),
  ),
);

let t: RelayTestApp;
let fake: FakeOpenAi;
let exposed: Set<string>;
/** The operator's metric names: from its own registry once it exists in the tree, else the agreed list. */
let operatorMetrics: readonly string[] = OPERATOR_METRICS;
const OPERATOR_REGISTRY = join(import.meta.dirname, '..', 'operator', 'src', 'runtime', 'metrics.ts');

beforeAll(async () => {
  fake = await startFakeOpenAi({ apiKey: 'sk-upstream' });
  t = await createRelayTestApp();
  await t.runtime.deps.options.set('ModelRatio', JSON.stringify({ 'gpt-4o-mini': 1.5 }));
  await t.seedChannel({ key: 'sk-upstream', baseUrl: fake.url, models: 'gpt-4o-mini' });
  const user = await t.seedUser({ quota: 10_000_000 });
  const token = await t.seedToken(user.id);
  const relay = await t.startRelay();
  const headers = { authorization: `Bearer sk-${token.key}` };
  // A plain call and a stream, so histograms and counters have series, not only their declarations.
  for (const stream of [false, true]) {
    const response = await relay.inject({
      method: 'POST',
      url: '/v1/chat/completions',
      headers,
      payload: { model: 'gpt-4o-mini', stream, messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(response.statusCode).toBe(200);
  }
  const scrape = await relay.inject({ method: 'GET', url: '/metrics' });
  expect(scrape.statusCode).toBe(200);
  exposed = exposedMetricNames(scrape.body);
  if (existsSync(OPERATOR_REGISTRY)) {
    const { createOperatorMetrics } = (await import(OPERATOR_REGISTRY)) as {
      createOperatorMetrics(): { registry: { metrics(): Promise<string> } };
    };
    operatorMetrics = [...exposedMetricNames(await createOperatorMetrics().registry.metrics())];
  }
});

afterAll(async () => {
  await t?.close();
  await fake?.close();
});

describe('alert rules (deploy/prometheus/turnpike-rules.yaml)', () => {
  it('has at least eight alerts, each with a severity and a summary', () => {
    const alerts = rules.filter((rule) => rule.alert);
    expect(alerts.length).toBeGreaterThanOrEqual(8);
    expect(new Set(alerts.map((rule) => rule.alert)).size).toBe(alerts.length);
    for (const alert of alerts) {
      expect(['critical', 'warning']).toContain(alert.labels?.severity);
      expect(alert.annotations?.summary).toBeTruthy();
    }
  });

  it('alerts on what an operator must hear about', () => {
    const reads = (alert: string) => [
      ...parsePromql(rules.find((r) => r.alert === alert)?.expr ?? '').metrics,
    ];
    expect(reads('TurnpikeRelayErrorRateHigh')).toEqual(['turnpike_relay_http_requests_total']);
    expect(reads('TurnpikeRelayOverheadHigh')).toEqual(['turnpike_relay_overhead_seconds_bucket']);
    expect(reads('TurnpikeTimeToFirstTokenHigh')).toEqual([
      'gen_ai_server_time_to_first_token_seconds_bucket',
    ]);
    expect(reads('TurnpikeChannelAutoDisabled')).toEqual(['turnpike_relay_channel_state']);
    expect(reads('TurnpikeRedisDegraded')).toEqual(['turnpike_redis_degraded']);
    expect(reads('TurnpikeSettlementBacklog')).toEqual(['turnpike_settlement_queue_oldest_seconds']);
    expect(reads('TurnpikeSettlementQueueNearCap').sort()).toEqual([
      'turnpike_settlement_queue_capacity',
      'turnpike_settlement_queue_records',
    ]);
    expect(reads('TurnpikeConfigApplySlow')).toEqual(['turnpike_config_apply_seconds_bucket']);
    expect(rules.find((r) => r.alert === 'TurnpikeConfigApplySlow')?.expr).toMatch(/> 2\s*$/);
    expect(reads('TurnpikePodRestarting')).toEqual(['kube_pod_container_status_restarts_total']);
    expect(reads('TurnpikeTaskRefundsHigh').sort()).toEqual([
      'turnpike_task_refunds_total',
      'turnpike_task_submits_total',
    ]);
    expect(rules.find((r) => r.alert === 'TurnpikeTaskRefundsHigh')?.for).toBe('15m');
  });

  it.each(rules.map((rule) => [rule.alert ?? rule.record, rule.expr]))(
    '%s parses as PromQL',
    (_name, expr) => {
      expect(parsePromql(expr).errors).toEqual([]);
    },
  );

  it('reads only metrics a running relay, the operator or the cluster exposes', () => {
    const known = new Set([...exposed, ...operatorMetrics, ...CLUSTER_METRICS]);
    const unknown = rules.flatMap((rule) =>
      [...parsePromql(rule.expr).metrics]
        .filter((name) => !known.has(name))
        .map((name) => `${rule.alert}: ${name}`),
    );
    expect(unknown).toEqual([]);
  });
});

describe('the operator metrics', () => {
  it('are the names agreed for the dashboards and alerts', () => {
    expect(OPERATOR_METRICS.filter((name) => !operatorMetrics.includes(name))).toEqual([]);
  });
});

describe('Grafana dashboards (deploy/grafana)', () => {
  it('are two: relay and GenAI traffic; operator and configuration', () => {
    expect(dashboards.map((d) => d.uid).sort()).toEqual(['turnpike-operator', 'turnpike-relay']);
    for (const dashboard of dashboards) {
      const ids = dashboard.panels.map((panel) => panel.id);
      expect(new Set(ids).size).toBe(ids.length);
    }
  });

  it('show the GenAI metrics, the autoscaling signals and the operator', () => {
    const read = (uid: string) =>
      new Set(
        dashboards
          .find((d) => d.uid === uid)
          ?.panels.flatMap((p) =>
            (p.targets ?? []).flatMap((t) => [...parsePromql(withoutGrafanaVariables(t.expr)).metrics]),
          ),
      );
    expect([...read('turnpike-relay')]).toEqual(
      expect.arrayContaining([
        'gen_ai_client_token_usage_sum',
        'gen_ai_server_request_duration_seconds_bucket',
        'gen_ai_server_time_to_first_token_seconds_bucket',
        'gen_ai_server_time_per_output_token_seconds_bucket',
        'turnpike_relay_inflight_requests',
        'turnpike_relay_active_streams',
        'turnpike_relay_overhead_seconds_bucket',
        'turnpike_relay_quota_spent_total',
        'turnpike_billing_adjustments_total',
        'turnpike_relay_rate_limited_total',
        'turnpike_relay_channel_state',
        'turnpike_task_submits_total',
        'turnpike_task_polls_total',
        'turnpike_task_refunds_total',
        'turnpike_task_refunded_quota_total',
        'turnpike_tasks_unfinished',
      ]),
    );
    const relay = dashboards.find((d) => d.uid === 'turnpike-relay');
    const tasksRow = relay?.panels.find(
      (p) => p.type === 'row' && p.title === 'Tasks (Midjourney, Suno, video)',
    );
    expect(tasksRow).toBeDefined();
    // the task panels sit under their row: below it and above the next one
    const nextRowY = Math.min(
      ...(relay?.panels ?? [])
        .filter((p) => p.type === 'row' && p.gridPos.y > (tasksRow?.gridPos.y ?? 0))
        .map((p) => p.gridPos.y),
    );
    const under = (relay?.panels ?? []).filter(
      (p) => p.gridPos.y > (tasksRow?.gridPos.y ?? 0) && p.gridPos.y < nextRowY,
    );
    expect(under.map((p) => p.title)).toEqual([
      'Task submits per second by outcome',
      'Task polls per second by outcome',
      'Task refunds by reason',
      'Unfinished tasks',
      'Quota refunded by provider',
    ]);
    expect([...read('turnpike-operator')]).toEqual(
      expect.arrayContaining([
        'turnpike_operator_reconcile_total',
        'turnpike_operator_leader',
        'turnpike_config_version_applied',
        'turnpike_config_apply_seconds_bucket',
        'turnpike_redis_degraded',
        'turnpike_log_queue_depth',
      ]),
    );
  });

  it.each(dashboardExprs.map((e) => [e.where, e.expr]))('%s parses as PromQL', (_where, expr) => {
    expect(parsePromql(expr).errors).toEqual([]);
  });

  it('read only metrics a running relay, the operator or the cluster exposes', () => {
    const known = new Set([...exposed, ...operatorMetrics, ...CLUSTER_METRICS]);
    const unknown = dashboardExprs.flatMap(({ where, expr }) =>
      [...parsePromql(expr).metrics].filter((name) => !known.has(name)).map((name) => `${where}: ${name}`),
    );
    const variables = dashboards.flatMap((d) =>
      d.templating.list
        .map((v) => /label_values\((\w+)/.exec(JSON.stringify(v.query))?.[1])
        .filter((name): name is string => name !== undefined && !known.has(name)),
    );
    expect([...unknown, ...variables]).toEqual([]);
  });
});
