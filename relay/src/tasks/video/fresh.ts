/**
 * A read of an unfinished video by its owner (`GET /v1/videos/{id}`, the reference's routes) that finds the task
 * not refreshed for {@link FRESH_MS} asks the channel about that one job first, the way a poll pass would
 * (poll.ts: the same fetch, timeout and `applyVideo`, so completion settles and failure refunds through the same
 * conditional updates and happen once however a retrieve and the poller race), and answers what it stored. Without
 * it a finished clip stays "queued" until the next pass, up to 15 s later. Reads of one task in one process share
 * one upstream call, and its answer for {@link FRESH_MS}. The row is the one the route already read: a task that is
 * finished or fresh costs nothing more; a refresh writes the row and reads it back only when it finished.
 */
import { type Task, tasks } from '@turnpike/core/db/schema/index';
import { isTaskFinished } from '@turnpike/core/domain/tasks';
import { eq } from 'drizzle-orm';
import type { RelayContext } from '../../pipeline/context.ts';
import { applyVideo, fetchVideos } from './poll.ts';
import { propertiesOf } from './task-row.ts';

/** How old a stored state may be before a read asks the upstream again. */
export const FRESH_MS = 1_000;

const refreshing = new WeakMap<RelayContext, Map<number, Promise<Task>>>();

/** The task as its channel reports it now when the stored state is older than {@link FRESH_MS}, else `row`. */
export function freshVideo(ctx: RelayContext, row: Task, nowMs = Date.now()): Promise<Task> {
  // `updated_at` is in whole seconds: the stored state is at least this old.
  if (isTaskFinished(row.status) || nowMs - row.updatedAt * 1000 < FRESH_MS) return Promise.resolve(row);
  if (propertiesOf(row).upstream_id === '') return Promise.resolve(row);
  let running = refreshing.get(ctx);
  if (!running) {
    running = new Map();
    refreshing.set(ctx, running);
  }
  const shared = running.get(row.id);
  if (shared) return shared;
  const refresh = refreshVideo(ctx, row);
  const ongoing = running;
  ongoing.set(row.id, refresh);
  void refresh.finally(() => {
    setTimeout(() => {
      if (ongoing.get(row.id) === refresh) ongoing.delete(row.id);
    }, FRESH_MS).unref();
  });
  return refresh;
}

/** One upstream read and its store; the stored row again when the channel cannot tell (it is the poller's then). */
async function refreshVideo(ctx: RelayContext, row: Task): Promise<Task> {
  try {
    const [video] = await fetchVideos(ctx, row.channelId, [propertiesOf(row).upstream_id]);
    if (!video) return row;
    const applied = await applyVideo(ctx, row, video, Date.now());
    if (applied.stored) return applied.stored;
    // Finished now, by this read or by whoever won the conditional update: read what was stored.
    const [stored] = await ctx.deps.db.select().from(tasks).where(eq(tasks.id, row.id)).limit(1);
    return stored ?? row;
  } catch (err) {
    ctx.log.warn({ err, taskId: row.id, channelId: row.channelId }, 'could not refresh a video task');
    return row;
  }
}
