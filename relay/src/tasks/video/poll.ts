/**
 * One poll pass over unfinished video tasks: each job is asked about on its channel (`GET …/videos/{id}`; OpenAI has
 * no batch read), its progress stored; a failed job is refunded through finish.ts, a completed one settled on its
 * real length through settle.ts, each exactly once.
 */
import { type Task, tasks } from '@turnpike/core/db/schema/index';
import { FINISHED_TASK_STATUSES, TaskPlatform, TaskStatus } from '@turnpike/core/domain/tasks';
import { ProviderTypeId } from '@turnpike/core/providers/catalogue';
import { and, asc, eq, notInArray } from 'drizzle-orm';
import type { RelayContext } from '../../pipeline/context.ts';
import { storableJson } from '../charge.ts';
import { failAndRefund } from '../finish.ts';
import { RefundReason, taskMetricsOf } from '../metrics.ts';
import { pollRows } from '../poll-rows.ts';
import type { PollReport, PollSettings } from '../provider.ts';
import { refundForLength } from './price.ts';
import { completeVideo } from './settle.ts';
import { propertiesOf } from './task-row.ts';
import { callVideoApi, NATIVE_VIDEO_APIS, readJson } from './upstream.ts';
import { veoFetch } from './veo.ts';
import {
  failureOf,
  parseSeconds,
  progressText,
  readUpstreamVideo,
  taskStatusOf,
  type UpstreamVideo,
} from './wire.ts';

/** How long one upstream read of a job may take (a poll pass, and a retrieve that refreshes its task: fresh.ts). */
const POLL_TIMEOUT_MS = 15_000;
/** Jobs of one channel asked about at once. */
const POLL_CONCURRENCY = 4;

/** The jobs `ids` as the channel reports them now; a job the upstream no longer knows is left out. */
export async function fetchVideos(
  ctx: RelayContext,
  channelId: number,
  ids: string[],
): Promise<UpstreamVideo[]> {
  const channel = ctx.channels.get(channelId);
  if (!channel?.key) throw new Error(`channel ${channelId} is unknown or has no key`);
  const dispatcher = ctx.upstream.dispatcherFor(channel.proxy);
  const found: UpstreamVideo[] = [];
  const queue = [...ids];
  const worker = async () => {
    for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
      const native = NATIVE_VIDEO_APIS.get(channel.type);
      if (native) {
        const video = await native.fetch(channel, dispatcher, id, POLL_TIMEOUT_MS);
        if (video) found.push(video);
        continue;
      }
      if (channel.type === ProviderTypeId.GeminiVeo) {
        const video = await veoFetch(channel, dispatcher, id, POLL_TIMEOUT_MS);
        if (video) found.push(video);
        continue;
      }
      const answer = await callVideoApi(channel, dispatcher, {
        method: 'GET',
        path: `/${encodeURIComponent(id)}`,
        timeoutMs: POLL_TIMEOUT_MS,
      });
      const video = answer.status === 200 ? readUpstreamVideo(await readJson(answer)) : undefined;
      if (answer.status !== 200) await answer.body.dump();
      // A job the upstream no longer knows is left to the time-out (pollRows counts it missing).
      if (video && video.id === id) found.push(video);
    }
  };
  await Promise.all(Array.from({ length: Math.min(POLL_CONCURRENCY, ids.length) }, worker));
  return found;
}

/** What storing an upstream answer did; `stored` is the row as written when it is still unfinished. */
export interface AppliedVideo {
  readonly updated: boolean;
  readonly refunded: number;
  readonly stored?: Task;
}

export async function applyVideo(
  ctx: RelayContext,
  row: Task,
  video: UpstreamVideo,
  nowMs: number,
): Promise<AppliedVideo> {
  const status = taskStatusOf(video.status);
  const now = Math.floor(nowMs / 1000);
  const data = storableJson(video);
  const startTime = row.startTime || (status === TaskStatus.Queued ? 0 : now);
  if (status === TaskStatus.Failure) {
    const refunded = await failAndRefund(ctx.deps.db, ctx.deps.bus, {
      kind: 'creative',
      id: row.id,
      reason: failureOf(video),
      now: nowMs,
      fields: { data, startTime },
    });
    taskMetricsOf(ctx).recordRefund('video', RefundReason.Failure, refunded);
    return { updated: true, refunded };
  }
  if (status === TaskStatus.Success) {
    const properties = propertiesOf(row);
    const realSeconds = parseSeconds(video.seconds);
    const refund = refundForLength(row.quota, properties.per_second_quota, realSeconds);
    const done = await completeVideo(ctx.deps.db, ctx.deps.bus, {
      id: row.id,
      refund,
      now: nowMs,
      fields: {
        data,
        startTime,
        finishTime: typeof video.completed_at === 'number' ? Math.trunc(video.completed_at) : now,
      },
      reason: `${properties.seconds} s charged, ${realSeconds ?? '?'} s delivered`,
    });
    taskMetricsOf(ctx).recordRefund('video', RefundReason.Length, done.refunded);
    return { updated: done.finished, refunded: done.refunded };
  }
  const progress = progressText(video.progress, status);
  const changed = await ctx.deps.db
    .update(tasks)
    .set({ status, data, startTime, updatedAt: now, ...(progress === undefined ? {} : { progress }) })
    .where(and(eq(tasks.id, row.id), notInArray(tasks.status, [...FINISHED_TASK_STATUSES])))
    .returning();
  const stored = changed[0];
  return {
    updated:
      stored !== undefined &&
      (row.status !== status || (progress !== undefined && progress !== row.progress)),
    refunded: 0,
    ...(stored ? { stored } : {}),
  };
}

export async function pollVideos(ctx: RelayContext, settings: PollSettings): Promise<PollReport> {
  const rows = await ctx.deps.db
    .select()
    .from(tasks)
    .where(and(eq(tasks.platform, TaskPlatform.Video), notInArray(tasks.status, [...FINISHED_TASK_STATUSES])))
    .orderBy(asc(tasks.id))
    .limit(settings.batch);
  return pollRows(ctx, settings, {
    kind: 'creative',
    label: 'video',
    provider: 'video',
    rows,
    idOf: (row) => row.id,
    upstreamIdOf: (row) => propertiesOf(row).upstream_id,
    channelOf: (row) => row.channelId,
    submittedAtOf: (row) => row.submitTime * 1000,
    fetch: (channelId, ids) => fetchVideos(ctx, channelId, ids),
    remoteIdOf: (video) => video.id,
    apply: (row, video) => applyVideo(ctx, row, video, settings.now),
  });
}
