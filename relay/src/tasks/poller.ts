/**
 * The task poller (reference §9.4): every 15 s the process holding the lease (lease.ts) asks each channel about its
 * unfinished tasks in one call, stores progress, results and failures, and fails and refunds the tasks older than
 * an hour. Passes never overlap within a process; across processes the lease keeps them apart.
 */
import type { RelayContext } from '../pipeline/context.ts';
import type { PollerLease } from './lease.ts';
import { taskMetricsOf } from './metrics.ts';
import { addReports, EMPTY_REPORT, type PollReport, type TaskProvider } from './provider.ts';

export const POLL_INTERVAL_MS = 15_000;
export const TASK_TIMEOUT_MS = 60 * 60_000;
export const POLL_BATCH = 500;

export interface PollOutcome {
  /** False when another process holds the lease and this one did nothing. */
  readonly leader: boolean;
  readonly report: PollReport;
}

export interface TaskPoller {
  /** One pass now (tests: `now` moves the clock used for time-outs). */
  runOnce(options?: { now?: number }): Promise<PollOutcome>;
  start(): void;
  /** Stops the loop, waits for a pass in flight and gives the lease up. */
  stop(): Promise<void>;
}

export function createTaskPoller(options: {
  ctx: RelayContext;
  providers: readonly TaskProvider[];
  lease: PollerLease;
  intervalMs?: number;
  timeoutMs?: number;
}): TaskPoller {
  const { ctx, providers, lease } = options;
  const intervalMs = options.intervalMs ?? POLL_INTERVAL_MS;
  const timeoutMs = options.timeoutMs ?? TASK_TIMEOUT_MS;
  // A pass may wait on several upstreams (15 s each at most): the lease outlives a slow one.
  const leaseMs = Math.max(4 * intervalMs, 60_000);
  let running: Promise<unknown> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;

  async function pass(now: number): Promise<PollOutcome> {
    if (!(await lease.acquire(leaseMs))) {
      // The lease holder reports the unfinished tasks; a process that lost the lease stops reporting them.
      taskMetricsOf(ctx).clearUnfinished();
      return { leader: false, report: EMPTY_REPORT };
    }
    let report = EMPTY_REPORT;
    for (const provider of providers) {
      try {
        report = addReports(report, await provider.poll(ctx, { now, timeoutMs, batch: POLL_BATCH }));
      } catch (err) {
        ctx.log.error({ err, provider: provider.id }, 'task poll failed');
      }
    }
    if (report.updated > 0) ctx.log.debug({ ...report }, 'tasks polled');
    return { leader: true, report };
  }

  function runOnce(runOptions: { now?: number } = {}): Promise<PollOutcome> {
    const next = (running ?? Promise.resolve()).then(() => pass(runOptions.now ?? Date.now()));
    const tracked: Promise<unknown> = next
      .catch(() => undefined)
      .finally(() => {
        if (running === tracked) running = undefined;
      });
    running = tracked;
    return next;
  }

  function schedule() {
    if (stopped) return;
    timer = setTimeout(() => {
      runOnce()
        .catch((err: unknown) => ctx.log.error({ err }, 'task poll failed'))
        .finally(schedule);
    }, intervalMs);
    timer.unref();
  }

  return {
    runOnce,
    start() {
      stopped = false;
      if (!timer) schedule();
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
      await running;
      await lease
        .release()
        .catch((err: unknown) => ctx.log.warn({ err }, 'could not release the poller lease'));
    },
  };
}
