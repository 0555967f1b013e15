/**
 * Prometheus metrics of the task relay, on the relay's own registry (`ctx.metrics.registry`), registered once per
 * registry on first use. Labels are closed sets only: the provider id, the action the proxy names (IMAGINE, ...,
 * MUSIC), an outcome or a reason; never a user, a token, a key or a task id.
 *
 * - `turnpike_task_submits_total{provider,action,outcome}`: one submit; `accepted` (stored and charged),
 *   `refused` (the upstream answered with a refusal), `error` (no readable answer, or the task could not be stored),
 *   `rejected` (the gateway refused it before it went upstream: balance, channel, origin task).
 * - `turnpike_task_polls_total{provider,outcome}`: one unfinished task asked about upstream by the poller;
 *   `updated`, `unchanged`, `missing` (the upstream did not report it), `error` (its channel could not be read, or
 *   its state could not be stored).
 * - `turnpike_task_refunds_total{provider,reason}`: one failed task whose price came back (finish.ts, so at most
 *   once per task across every process); `failure` (the upstream said so, or the task had no upstream id) or
 *   `timeout` (unfinished past the time-out); `length` (a video shorter than charged: the difference came back).
 * - `turnpike_task_refunded_quota_total{provider}`: the quota those refunds gave back.
 * - `turnpike_tasks_unfinished{provider}`: unfinished tasks the last pass of the poller found (at most the batch
 *   size); only the process holding the lease reports it, the others report nothing, so a sum over pods is right.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { RelayContext } from '../pipeline/context.ts';

/** Providers as the metrics name them (the `TaskProvider` ids). */
export type TaskProviderId = 'midjourney' | 'suno' | 'video';

export const SubmitOutcome = {
  Accepted: 'accepted',
  Refused: 'refused',
  Error: 'error',
  Rejected: 'rejected',
} as const;
export type SubmitOutcome = (typeof SubmitOutcome)[keyof typeof SubmitOutcome];

export const PollOutcome = {
  Updated: 'updated',
  Unchanged: 'unchanged',
  Missing: 'missing',
  Error: 'error',
} as const;
export type PollOutcome = (typeof PollOutcome)[keyof typeof PollOutcome];

/** `length`: a video came out shorter than the length it was charged for, and the difference came back. */
export const RefundReason = { Failure: 'failure', Timeout: 'timeout', Length: 'length' } as const;
export type RefundReason = (typeof RefundReason)[keyof typeof RefundReason];

export interface TaskMetrics {
  recordSubmit(provider: TaskProviderId, action: string, outcome: SubmitOutcome): void;
  recordPolls(provider: TaskProviderId, outcome: PollOutcome, count?: number): void;
  /** One refund actually paid (`quota` > 0); a failure that paid nothing is not a refund. */
  recordRefund(provider: TaskProviderId, reason: RefundReason, quota: number): void;
  setUnfinished(provider: TaskProviderId, count: number): void;
  /** This process does not hold the poller lease: it reports no unfinished tasks. */
  clearUnfinished(): void;
}

function createTaskMetrics(registry: Registry): TaskMetrics {
  const submits = new Counter({
    name: 'turnpike_task_submits_total',
    help: 'Task submits (Midjourney, Suno, video) by provider, action and outcome.',
    labelNames: ['provider', 'action', 'outcome'],
    registers: [registry],
  });
  const polls = new Counter({
    name: 'turnpike_task_polls_total',
    help: 'Unfinished tasks asked about upstream by the poller, by provider and outcome.',
    labelNames: ['provider', 'outcome'],
    registers: [registry],
  });
  const refunds = new Counter({
    name: 'turnpike_task_refunds_total',
    help: 'Tasks refunded (once each), by provider and reason (failure, timeout, length).',
    labelNames: ['provider', 'reason'],
    registers: [registry],
  });
  const refundedQuota = new Counter({
    name: 'turnpike_task_refunded_quota_total',
    help: 'Quota given back by task refunds, by provider.',
    labelNames: ['provider'],
    registers: [registry],
  });
  const unfinished = new Gauge({
    name: 'turnpike_tasks_unfinished',
    help: 'Unfinished tasks found by the last poll pass (lease holder only; capped at the batch size).',
    labelNames: ['provider'],
    registers: [registry],
  });
  return {
    recordSubmit(provider, action, outcome) {
      submits.inc({ provider, action, outcome });
    },
    recordPolls(provider, outcome, count = 1) {
      if (count > 0) polls.inc({ provider, outcome }, count);
    },
    recordRefund(provider, reason, quota) {
      if (quota <= 0) return;
      refunds.inc({ provider, reason });
      refundedQuota.inc({ provider }, quota);
    },
    setUnfinished(provider, count) {
      unfinished.set({ provider }, count);
    },
    clearUnfinished() {
      unfinished.reset();
    },
  };
}

const byRegistry = new WeakMap<Registry, TaskMetrics>();

/** The task metrics of a relay, registered on its registry the first time they are asked for. */
export function taskMetricsOf(ctx: Pick<RelayContext, 'metrics'>): TaskMetrics {
  const { registry } = ctx.metrics;
  let metrics = byRegistry.get(registry);
  if (!metrics) {
    metrics = createTaskMetrics(registry);
    byRegistry.set(registry, metrics);
  }
  return metrics;
}
