import { and, desc, eq, gte, lte, type SQL } from 'drizzle-orm';
import type { Executor } from '../db/client.ts';
import { type Midjourney, midjourneys, type Task, tasks } from '../db/schema/index.ts';

/** Filters of the task lists; absent (or 0) fields do not filter. */
export interface TaskListFilter {
  readonly userId?: number | undefined;
  readonly channelId?: number | undefined;
  /** The upstream task id (`mj_id` of drawing tasks, `task_id` of creative tasks). */
  readonly upstreamId?: string | undefined;
  /** On the submit time, inclusive; milliseconds for drawing tasks, seconds for creative tasks. */
  readonly start?: number | undefined;
  readonly end?: number | undefined;
}

export interface TaskPageRequest {
  readonly offset: number;
  readonly limit: number;
}

function present<T>(conditions: (T | undefined)[]): T[] {
  return conditions.filter((c): c is T => c !== undefined);
}

/** Reads of drawing (Midjourney) and creative (Suno, ...) tasks for the task logs, newest first. */
export function createTaskRepo(db: Executor) {
  return {
    async listDrawings(filter: TaskListFilter, request: TaskPageRequest): Promise<Midjourney[]> {
      const where = present<SQL>([
        filter.userId !== undefined ? eq(midjourneys.userId, filter.userId) : undefined,
        filter.channelId ? eq(midjourneys.channelId, filter.channelId) : undefined,
        filter.upstreamId ? eq(midjourneys.mjId, filter.upstreamId) : undefined,
        filter.start ? gte(midjourneys.submitTime, filter.start) : undefined,
        filter.end ? lte(midjourneys.submitTime, filter.end) : undefined,
      ]);
      return db
        .select()
        .from(midjourneys)
        .where(and(...where))
        .orderBy(desc(midjourneys.id))
        .limit(request.limit)
        .offset(request.offset);
    },

    async listTasks(filter: TaskListFilter, request: TaskPageRequest): Promise<Task[]> {
      const where = present<SQL>([
        filter.userId !== undefined ? eq(tasks.userId, filter.userId) : undefined,
        filter.channelId ? eq(tasks.channelId, filter.channelId) : undefined,
        filter.upstreamId ? eq(tasks.taskId, filter.upstreamId) : undefined,
        filter.start ? gte(tasks.submitTime, filter.start) : undefined,
        filter.end ? lte(tasks.submitTime, filter.end) : undefined,
      ]);
      return db
        .select()
        .from(tasks)
        .where(and(...where))
        .orderBy(desc(tasks.id))
        .limit(request.limit)
        .offset(request.offset);
    },
  };
}

export type TaskRepo = ReturnType<typeof createTaskRepo>;
