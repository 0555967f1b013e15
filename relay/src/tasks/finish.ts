/**
 * The one way a task becomes FAILURE and its price comes back. The step into FAILURE is a conditional update
 * (only from an unfinished state) in the same transaction as the credit to the user (and the token, when its quota
 * is limited) and the refund's system log, so however many relay processes see the failure at once (two pollers,
 * a poller and a notify callback), exactly one of them changes the row and only that one pays. The caches and the
 * ledger read the balances again after the commit (`users.changed` / `tokens.changed`).
 */
import type { Db } from '@turnpike/core/db/client';
import { logs, midjourneys, tasks, tokens, users } from '@turnpike/core/db/schema/index';
import { LogType } from '@turnpike/core/domain/logs';
import { FINISHED_TASK_STATUSES, TaskStatus } from '@turnpike/core/domain/tasks';
import type { EventBus } from '@turnpike/core/events/bus';
import { and, eq, notInArray, sql } from 'drizzle-orm';

/** Which table a task lives in: drawing tasks (milliseconds) or creative tasks (seconds). */
export type TaskKind = 'drawing' | 'creative';

export interface FailedTask {
  readonly kind: TaskKind;
  readonly id: number;
  readonly reason: string;
  /** Unix milliseconds. */
  readonly now: number;
  /** Other columns to store with the failure (progress, image url, ...). */
  readonly fields?: Record<string, unknown>;
}

/** Refunded quota, or 0 when the task was already finished (someone else failed it) or cost nothing. */
export async function failAndRefund(db: Db, bus: EventBus, failed: FailedTask): Promise<number> {
  const refund = await db.transaction(async (tx) => {
    const rows =
      failed.kind === 'drawing'
        ? await tx
            .update(midjourneys)
            .set({
              ...failed.fields,
              status: TaskStatus.Failure,
              progress: '100%',
              failReason: failed.reason,
              finishTime: failed.now,
            })
            .where(
              and(eq(midjourneys.id, failed.id), notInArray(midjourneys.status, [...FINISHED_TASK_STATUSES])),
            )
            .returning({
              userId: midjourneys.userId,
              tokenId: midjourneys.tokenId,
              quota: midjourneys.quota,
              name: midjourneys.mjId,
              action: midjourneys.action,
            })
        : await tx
            .update(tasks)
            .set({
              ...failed.fields,
              status: TaskStatus.Failure,
              progress: '100%',
              failReason: failed.reason,
              finishTime: Math.floor(failed.now / 1000),
              updatedAt: Math.floor(failed.now / 1000),
            })
            .where(and(eq(tasks.id, failed.id), notInArray(tasks.status, [...FINISHED_TASK_STATUSES])))
            .returning({
              userId: tasks.userId,
              tokenId: tasks.tokenId,
              quota: tasks.quota,
              name: tasks.taskId,
              action: tasks.action,
            });
    const row = rows[0];
    if (!row || row.quota <= 0) return undefined;
    await tx
      .update(users)
      .set({ quota: sql`${users.quota} + ${row.quota}` })
      .where(eq(users.id, row.userId));
    const credited = row.tokenId
      ? await tx
          .update(tokens)
          .set({ remainQuota: sql`${tokens.remainQuota} + ${row.quota}` })
          .where(and(eq(tokens.id, row.tokenId), eq(tokens.unlimitedQuota, false)))
          .returning({ id: tokens.id })
      : [];
    const [user] = await tx.select({ username: users.username }).from(users).where(eq(users.id, row.userId));
    await tx.insert(logs).values({
      userId: row.userId,
      createdAt: Math.floor(failed.now / 1000),
      type: LogType.System,
      username: user?.username ?? '',
      content: `${failed.kind === 'drawing' ? 'drawing' : 'task'} ${row.name} (${row.action}) failed: ${failed.reason}; refunded ${row.quota}`,
      quota: row.quota,
      tokenId: row.tokenId,
    });
    return { userId: row.userId, tokenId: credited.length > 0 ? row.tokenId : undefined, quota: row.quota };
  });
  if (!refund) return 0;
  await bus.publish({ type: 'users.changed', ids: [refund.userId] });
  if (refund.tokenId !== undefined) await bus.publish({ type: 'tokens.changed', ids: [refund.tokenId] });
  return refund.quota;
}
