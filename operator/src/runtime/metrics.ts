/**
 * The operator's Prometheus metrics, in a registry of its own. The chart's dashboards and alerts read these
 * names (issue 19's contract); do not rename them.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';

/** Counts resources by kind and Ready status at scrape time (the informer caches hold them). */
export type ResourceCounter = () => Iterable<{ kind: string; ready: string }>;

export function createOperatorMetrics() {
  const registry = new Registry();
  const counter: { count: ResourceCounter } = { count: () => [] };
  return {
    registry,
    reconcileTotal: new Counter({
      name: 'turnpike_operator_reconcile_total',
      help: 'Reconciles by kind and result (success, error, requeue)',
      labelNames: ['kind', 'result'] as const,
      registers: [registry],
    }),
    reconcileDuration: new Histogram({
      name: 'turnpike_operator_reconcile_duration_seconds',
      help: 'Time one reconcile took, by kind',
      labelNames: ['kind'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    queueDepth: new Gauge({
      name: 'turnpike_operator_queue_depth',
      help: 'Keys waiting in the work queue, by kind',
      labelNames: ['kind'] as const,
      registers: [registry],
    }),
    leader: new Gauge({
      name: 'turnpike_operator_leader',
      help: '1 while this operator process holds the Lease and reconciles, else 0',
      registers: [registry],
    }),
    resources: new Gauge({
      name: 'turnpike_operator_resources',
      help: 'Custom resources by kind and Ready condition (True, False, Unknown)',
      labelNames: ['kind', 'ready'] as const,
      registers: [registry],
      collect() {
        this.reset();
        for (const { kind, ready } of counter.count()) this.inc({ kind, ready });
      },
    }),
    /** Sets what the resources gauge counts. */
    countResourcesWith(count: ResourceCounter) {
      counter.count = count;
    },
    databaseUnavailable: new Counter({
      name: 'turnpike_operator_database_unavailable_total',
      help: 'Reconciles that failed because the database was unreachable, by kind (each retried with backoff)',
      labelNames: ['kind'] as const,
      registers: [registry],
    }),
    watchRestarts: new Counter({
      name: 'turnpike_operator_watch_restarts_total',
      help: 'Watches restarted after 410 Gone or an error, by kind (Secret included)',
      labelNames: ['kind'] as const,
      registers: [registry],
    }),
  };
}

export type OperatorMetrics = ReturnType<typeof createOperatorMetrics>;
