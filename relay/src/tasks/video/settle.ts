/**
 * The one way a video task becomes SUCCESS: a conditional update (only from an unfinished state), and when the clip
 * came out shorter than was charged, the difference credited back in the same transaction (the user, the token when
 * its quota is limited, the task's own `quota` lowered to what it finally cost) with a system log. However many
 * relays see the completion at once, and whether a failure or a time-out (finish.ts) races it, exactly one of them
 * finishes the task and only that one pays anything back.
 */
import type { Db } from '@turnpike/core/db/client';
import { logs, type Task, tasks, tokens, users } from '@turnpike/core/db/schema/index';
import { LogType } from '@turnpike/core/domain/logs';
import { FINISHED_TASK_STATUSES, TaskStatus } from '@turnpike/core/domain/tasks';
import type { EventBus } from '@turnpike/core/events/bus';
import { and, eq, notInArray, sql } from 'drizzle-orm';

export interface CompletedVideo {
  readonly id: number;
  /** Quota to give back (0: none). */
  readonly refund: number;
  /** Unix milliseconds. */
  readonly now: number;
  /** Other columns to store with the success (data, progress, times). */
  readonly fields: Partial<Task>;
  /** Why the refund, for the log (`12 s asked, 8 s delivered`). */
  readonly reason: string;
}

/** Whether this call finished the task, and the quota it gave back. */
export async function completeVideo(
  db: Db,
  bus: EventBus,
  done: CompletedVideo,
): Promise<{ finished: boolean; refunded: number }> {
  const now = Math.floor(done.now / 1000);
  const result = await db.transaction(async (tx) => {
    const rows = await tx
      .update(tasks)
      .set({
        ...done.fields,
        status: TaskStatus.Success,
        progress: '100%',
        finishTime: done.fields.finishTime || now,
        updatedAt: now,
        // The refund can only be what was charged: the task's quota never goes below zero.
        quota: sql`${tasks.quota} - least(${tasks.quota}, ${done.refund})`,
      })
      .where(and(eq(tasks.id, done.id), notInArray(tasks.status, [...FINISHED_TASK_STATUSES])))
      .returning({ userId: tasks.userId, tokenId: tasks.tokenId, quota: tasks.quota, name: tasks.taskId });
    const row = rows[0];
    if (!row) return undefined;
    // `quota` is now what the task cost; what it cost before is that plus the refund, so the refund is capped by it.
    const refund = done.refund;
    if (refund <= 0) return { refund: 0, userId: row.userId, tokenId: undefined };
    await tx
      .update(users)
      .set({ quota: sql`${users.quota} + ${refund}` })
      .where(eq(users.id, row.userId));
    const credited = row.tokenId
      ? await tx
          .update(tokens)
          .set({ remainQuota: sql`${tokens.remainQuota} + ${refund}` })
          .where(and(eq(tokens.id, row.tokenId), eq(tokens.unlimitedQuota, false)))
          .returning({ id: tokens.id })
      : [];
    const [user] = await tx.select({ username: users.username }).from(users).where(eq(users.id, row.userId));
    await tx.insert(logs).values({
      userId: row.userId,
      createdAt: now,
      type: LogType.System,
      username: user?.username ?? '',
      content: `video ${row.name} completed shorter than charged (${done.reason}); refunded ${refund}`,
      quota: refund,
      tokenId: row.tokenId,
    });
    return { refund, userId: row.userId, tokenId: credited.length > 0 ? row.tokenId : undefined };
  });
  if (!result) return { finished: false, refunded: 0 };
  if (result.refund > 0) {
    await bus.publish({ type: 'users.changed', ids: [result.userId] });
    if (result.tokenId !== undefined) await bus.publish({ type: 'tokens.changed', ids: [result.tokenId] });
  }
  return { finished: true, refunded: result.refund };
}
