/**
 * The alert rules (deploy/prometheus) and Grafana dashboards (deploy/grafana) against what Turnpike exposes and
 * against a real Prometheus. A relay listening on 127.0.0.1 serves real traffic through a fake upstream, and a
 * stand-in operator serves the operator's own metrics registry over its own HTTP server; Prometheus (Debian's
 * package) scrapes both every second with the rules loaded. Then every dashboard query goes through Prometheus'
 * query API, every rule must evaluate without error, and `promtool` checks the rule file and runs its unit tests
 * (deploy/prometheus/tests). Without Prometheus the file still checks, with Prometheus' PromQL grammar, that every
 * metric a rule or panel reads is one a running relay, the operator or the cluster serves; with CI=true a missing
 * Prometheus fails.
 */

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { waitFor } from '../core/src/testing/wait.ts';
import { type HealthServer, startHealthServer } from '../operator/src/runtime/health.ts';
import { createOperatorMetrics } from '../operator/src/runtime/metrics.ts';
import { type FakeOpenAi, startFakeOpenAi } from '../relay/src/testing/fake-openai.ts';
import { createRelayTestApp, type RelayTestApp } from '../relay/src/testing/relay-test-app.ts';
import {
  prometheusMissing,
  promtool,
  type RunningPrometheus,
  startPrometheus,
} from './testing/prometheus.ts';
import { exposedMetricNames, metricsRead, withGrafanaVariables } from './testing/promql.ts';

const DEPLOY = join(import.meta.dirname, '..', 'deploy');
const RULES_FILE = join(DEPLOY, 'prometheus', 'turnpike-rules.yaml');

/**
 * The operator's metrics as agreed with its author: the operator dashboard and alerts may read these and no other
 * `turnpike_operator_*` name; the operator's registry must serve every one of them.
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
  parse(readFileSync(RULES_FILE, 'utf8')) as {
    groups: { name: string; rules: Rule[] }[];
  }
).groups.flatMap((group) => group.rules);

interface Panel {
  readonly id: number;
  readonly type: string;
  readonly title: string;
  readonly gridPos: { x: number; y: number; w: number; h: number };
  readonly targets?: { expr: string; refId: string }[];
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

/** Every PromQL query of the dashboards, named by dashboard, panel and query letter. */
const dashboardQueries = dashboards.flatMap((dashboard) =>
  dashboard.panels.flatMap((panel) =>
    (panel.targets ?? []).map((target) => ({
      where: `${dashboard.title} / ${panel.title} (${target.refId})`,
      panel: panel.title,
      expr: target.expr,
    })),
  ),
);

/** Where the scraped pods would be in a cluster: the labels a ServiceMonitor attaches to every series. */
const NAMESPACE = 'turnpike-test';

let t: RelayTestApp;
let fake: FakeOpenAi;
let relayAddress: string;
let exposed: Set<string>;
const operator = createOperatorMetrics();
let operatorServer: HealthServer;
let operatorMetrics: readonly string[];

/** A plain call and a stream, so histograms and counters have series, not only their declarations. */
let chat: () => Promise<void>;

beforeAll(async () => {
  fake = await startFakeOpenAi({ apiKey: 'sk-upstream' });
  t = await createRelayTestApp();
  await t.runtime.deps.options.set('ModelRatio', JSON.stringify({ 'gpt-4o-mini': 1.5 }));
  await t.seedChannel({ key: 'sk-upstream', baseUrl: fake.url, models: 'gpt-4o-mini' });
  const user = await t.seedUser({ quota: 10_000_000 });
  const token = await t.seedToken(user.id);
  const relay = await t.startRelay();
  relayAddress = new URL(await relay.listen({ port: 0, host: '127.0.0.1' })).host;
  const headers = { authorization: `Bearer sk-${token.key}` };
  chat = async () => {
    for (const stream of [false, true]) {
      const response = await relay.inject({
        method: 'POST',
        url: '/v1/chat/completions',
        headers,
        payload: { model: 'gpt-4o-mini', stream, messages: [{ role: 'user', content: 'hi' }] },
      });
      expect(response.statusCode).toBe(200);
    }
  };
  await chat();
  const scrape = await fetch(`http://${relayAddress}/metrics`);
  expect(scrape.status).toBe(200);
  exposed = exposedMetricNames(await scrape.text());

  // The operator as its process serves itself: its own registry on its own health server, after one reconcile.
  operator.leader.set(1);
  operator.countResourcesWith(() => [{ kind: 'Channel', ready: 'True' }]);
  operator.queueDepth.set({ kind: 'Channel' }, 0);
  operator.watchRestarts.inc({ kind: 'Channel' });
  reconcileOnce();
  operatorServer = await startHealthServer({
    port: 0,
    host: '127.0.0.1',
    registry: operator.registry,
    ready: () => true,
  });
  operatorMetrics = [...exposedMetricNames(await operator.registry.metrics())];
});

function reconcileOnce(): void {
  operator.reconcileTotal.inc({ kind: 'Channel', result: 'success' });
  operator.reconcileDuration.observe({ kind: 'Channel' }, 0.02);
}

afterAll(async () => {
  await operatorServer?.close();
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
    const reads = (alert: string) => [...metricsRead(rules.find((r) => r.alert === alert)?.expr ?? '')];
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

  it('reads only metrics a running relay, the operator or the cluster exposes', () => {
    const known = new Set([...exposed, ...operatorMetrics, ...CLUSTER_METRICS]);
    const unknown = rules.flatMap((rule) =>
      [...metricsRead(rule.expr)].filter((name) => !known.has(name)).map((name) => `${rule.alert}: ${name}`),
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
            (p.targets ?? []).flatMap((t) => [...metricsRead(withGrafanaVariables(t.expr))]),
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

  it('read only metrics a running relay, the operator or the cluster exposes', () => {
    const known = new Set([...exposed, ...operatorMetrics, ...CLUSTER_METRICS]);
    const unknown = dashboardQueries.flatMap(({ where, expr }) =>
      [...metricsRead(withGrafanaVariables(expr))]
        .filter((name) => !known.has(name))
        .map((name) => `${where}: ${name}`),
    );
    const variables = dashboards.flatMap((d) =>
      d.templating.list
        .map((v) => /label_values\((\w+)/.exec(JSON.stringify(v.query))?.[1])
        .filter((name): name is string => name !== undefined && !known.has(name)),
    );
    expect([...unknown, ...variables]).toEqual([]);
  });
});

/**
 * Panels that show nothing after chat traffic alone, and why; every other panel must draw at least one line. The
 * operator, Redis and configuration panels draw: the relay serves its side of them and the stand-in operator its own.
 */
const EMPTY_AFTER_CHAT: Readonly<Record<string, string>> = {
  'Failed calls per second by error type': 'no call failed',
  'Limit refusals per second by scope and kind': 'no limit refused a call',
  'Task submits per second by outcome': 'no task was submitted (chat only)',
  'Task polls per second by outcome': 'no task was submitted (chat only)',
  'Task refunds by reason': 'no task was submitted (chat only)',
  'Unfinished tasks': 'no task was submitted (chat only): the task poller has none to count',
  'Quota refunded by provider': 'no task was submitted (chat only)',
  'Pod restarts (kube-state-metrics)': 'a cluster metric from kube-state-metrics, which is not scraped here',
};

/** Grafana's variables as a dashboard over the last minutes of this Prometheus would fill them. */
const PANEL_VARIABLES = { interval: '1m', namespace: NAMESPACE };

const missing = prometheusMissing();
const isCi = process.env.CI === 'true';

describe.skipIf(missing !== undefined && !isCi)(
  `a real Prometheus scraping a relay and the operator${missing && !isCi ? ` (skipped: ${missing})` : ''}`,
  () => {
    let prometheus: RunningPrometheus;

    beforeAll(async () => {
      if (missing) throw new Error(`CI=true needs Prometheus: ${missing}`);
      prometheus = await startPrometheus({
        ruleFiles: [RULES_FILE],
        targets: [
          {
            job: 'turnpike-relay',
            address: relayAddress,
            labels: { namespace: NAMESPACE, pod: 'turnpike-relay-0' },
          },
          {
            job: 'turnpike-operator',
            address: `127.0.0.1:${operatorServer.port}`,
            labels: { namespace: NAMESPACE, pod: 'turnpike-operator-0' },
          },
        ],
      });
      // Two scrapes of each target landed, then more traffic, then a scrape that saw it: rates are above zero.
      await waitFor(
        async () => ((await prometheus.scalar('min(count_over_time(up[1m]))')) ?? 0) >= 2 || undefined,
        20_000,
      );
      expect(await prometheus.scalar('min(up)')).toBe(1);
      await chat();
      reconcileOnce();
      // An operator's price change, which the relay applies from the change event it publishes.
      await t.runtime.deps.options.set('ModelRatio', JSON.stringify({ 'gpt-4o-mini': 2 }));
      await waitFor(async () => {
        const requests = await prometheus.scalar('sum(turnpike_relay_http_requests_total)');
        const reconciles = await prometheus.scalar('sum(turnpike_operator_reconcile_total)');
        const applied = await prometheus.scalar('sum(turnpike_config_apply_seconds_count)');
        return (requests ?? 0) >= 4 && (reconciles ?? 0) >= 2 && (applied ?? 0) >= 1 ? true : undefined;
      }, 20_000);
    });

    afterAll(async () => {
      await prometheus?.close();
    });

    it('promtool accepts the alert rules', async () => {
      const checked = await promtool(['check', 'rules', RULES_FILE]);
      expect(checked.output).toContain('SUCCESS');
      expect(checked.code, checked.output).toBe(0);
    });

    it('fires the key alerts on what should page an operator, and only then (promtool test rules)', async () => {
      const tested = await promtool([
        'test',
        'rules',
        join(DEPLOY, 'prometheus', 'tests', 'turnpike-rules.test.yaml'),
      ]);
      expect(tested.code, tested.output).toBe(0);
    });

    it('evaluates every alert rule without error', async () => {
      const evaluated = await waitFor(async () => {
        const health = await prometheus.rules();
        return health.length > 0 && health.every((rule) => rule.health !== 'unknown') ? health : undefined;
      }, 20_000);
      expect(evaluated.map((rule) => rule.name).sort()).toEqual(
        rules.map((rule) => rule.alert ?? rule.record).sort(),
      );
      expect(
        evaluated.filter((rule) => rule.health !== 'ok').map((rule) => `${rule.name}: ${rule.lastError}`),
      ).toEqual([]);
    });

    it("fills each dashboard's namespace picker", async () => {
      for (const dashboard of dashboards)
        for (const variable of dashboard.templating.list) {
          const match = /label_values\((\w+),\s*(\w+)\)/.exec(JSON.stringify(variable.query));
          if (!match) continue;
          const [, metric, label] = match as unknown as [string, string, string];
          expect(
            await prometheus.labelValues(label, metric),
            `${dashboard.title} / $${variable.name}`,
          ).toEqual([NAMESPACE]);
        }
    });

    it.each(dashboardQueries.map((q) => [q.where, q]))(
      '%s is accepted by Prometheus',
      async (_where, query) => {
        const result = await prometheus.query(withGrafanaVariables(query.expr, PANEL_VARIABLES));
        expect(result.ok ? undefined : result.error, query.expr).toBeUndefined();
      },
    );

    it('draws every panel that chat traffic feeds', async () => {
      const titles = new Set(dashboardQueries.map((query) => query.panel));
      expect(Object.keys(EMPTY_AFTER_CHAT).filter((title) => !titles.has(title))).toEqual([]);
      const blank: string[] = [];
      for (const query of dashboardQueries) {
        if (query.panel in EMPTY_AFTER_CHAT) continue;
        const result = await prometheus.query(withGrafanaVariables(query.expr, PANEL_VARIABLES));
        if (!result.ok || !result.series.some((s) => Number.isFinite(s.value))) blank.push(query.where);
      }
      expect(blank).toEqual([]);
    });
  },
);
