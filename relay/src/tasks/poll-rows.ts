/**
 * One pass over unfinished tasks of one provider: a task with no upstream id, or past the time-out, fails and is
 * refunded (finish.ts, exactly once); the rest are fetched from their channels, one upstream call per channel, and
 * each answer is applied. A channel that cannot be reached is skipped until the next pass.
 */
import type { RelayContext } from '../pipeline/context.ts';
import { failAndRefund } from './finish.ts';
import { PollOutcome, RefundReason, type TaskProviderId, taskMetricsOf } from './metrics.ts';
import { EMPTY_REPORT, type PollReport, type PollSettings } from './provider.ts';

export interface PollRows<Row, Remote> {
  /** Which table a failure is written to (finish.ts). */
  readonly kind: 'drawing' | 'creative';
  /** How the warnings name these tasks ("drawing", "suno"). */
  readonly label: string;
  /** How the metrics name the provider. */
  readonly provider: TaskProviderId;
  readonly rows: readonly Row[];
  readonly idOf: (row: Row) => number;
  readonly upstreamIdOf: (row: Row) => string;
  readonly channelOf: (row: Row) => number;
  /** When the task was submitted (epoch ms), 0 when unknown. */
  readonly submittedAtOf: (row: Row) => number;
  readonly fetch: (channelId: number, upstreamIds: string[]) => Promise<Remote[]>;
  readonly remoteIdOf: (task: Remote) => string;
  readonly apply: (row: Row, task: Remote) => Promise<{ updated: boolean; refunded: number }>;
}

export async function pollRows<Row, Remote>(
  ctx: RelayContext,
  settings: PollSettings,
  input: PollRows<Row, Remote>,
): Promise<PollReport> {
  const metrics = taskMetricsOf(ctx);
  metrics.setUnfinished(input.provider, input.rows.length);
  if (input.rows.length === 0) return EMPTY_REPORT;
  const report = { polled: 0, updated: 0, refunded: 0, refundedQuota: 0 };
  const count = (result: { updated: boolean; refunded: number }) => {
    if (result.updated) report.updated += 1;
    if (result.refunded > 0) {
      report.refunded += 1;
      report.refundedQuota += result.refunded;
    }
  };
  const byChannel = new Map<number, Row[]>();
  for (const row of input.rows) {
    const submittedAt = input.submittedAtOf(row);
    const timedOut = submittedAt > 0 && settings.now - submittedAt > settings.timeoutMs;
    const reason =
      input.upstreamIdOf(row) === ''
        ? 'the task has no upstream id'
        : timedOut
          ? `the upstream task timed out (over ${Math.round(settings.timeoutMs / 60_000)} minutes)`
          : undefined;
    if (reason === undefined) {
      const channelId = input.channelOf(row);
      byChannel.set(channelId, [...(byChannel.get(channelId) ?? []), row]);
      continue;
    }
    const refunded = await failAndRefund(ctx.deps.db, ctx.deps.bus, {
      kind: input.kind,
      id: input.idOf(row),
      reason,
      now: settings.now,
    });
    const why = input.upstreamIdOf(row) !== '' && timedOut ? RefundReason.Timeout : RefundReason.Failure;
    metrics.recordRefund(input.provider, why, refunded);
    count({ updated: true, refunded });
  }
  for (const [channelId, list] of byChannel) {
    let found: Remote[];
    try {
      report.polled += list.length;
      found = await input.fetch(channelId, list.map(input.upstreamIdOf));
    } catch (err) {
      ctx.log.warn({ err, channelId, tasks: list.length }, `could not poll ${input.label} tasks`);
      metrics.recordPolls(input.provider, PollOutcome.Error, list.length);
      continue;
    }
    const byId = new Map(found.map((task) => [input.remoteIdOf(task), task]));
    for (const row of list) {
      const task = byId.get(input.upstreamIdOf(row));
      if (!task) {
        metrics.recordPolls(input.provider, PollOutcome.Missing);
        continue;
      }
      try {
        const result = await input.apply(row, task);
        metrics.recordPolls(input.provider, result.updated ? PollOutcome.Updated : PollOutcome.Unchanged);
        count(result);
      } catch (err) {
        metrics.recordPolls(input.provider, PollOutcome.Error);
        ctx.log.warn({ err, taskId: input.idOf(row) }, `could not store a ${input.label} task state`);
      }
    }
  }
  return report;
}
