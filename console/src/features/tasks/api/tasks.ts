import type { DrawingView, TaskView } from '@turnpike/core/contracts/tasks';
import { api } from '../../../lib/api.ts';

/** A drawing task as GET /api/mj/ (admin, with `channel_id`) or /api/mj/self answers; times in milliseconds. */
export type DrawingRow = DrawingView;
/** A creative task as GET /api/task/ (admin, with `channel_id`) or /api/task/self answers; times in seconds. */
export type TaskRow = TaskView;

/**
 * The filter form of both logs once checked; empty strings and 0 mean "no filter". The time unit is the one
 * the endpoint takes: milliseconds for drawing tasks, seconds for creative tasks.
 */
export interface TaskFilters {
  /** The upstream id: `mj_id` of a drawing task, `task_id` of a creative task. */
  taskId: string;
  /** Admin only: a channel id. */
  channelId: string;
  start: number;
  end: number;
}

function queryOf(filters: TaskFilters, admin: boolean, idName: 'mj_id' | 'task_id') {
  return {
    [idName]: filters.taskId.trim() || undefined,
    start_timestamp: filters.start || undefined,
    end_timestamp: filters.end || undefined,
    ...(admin ? { channel_id: filters.channelId.trim() || undefined } : {}),
  };
}

/** One server page (counted from 0) of drawing tasks; a page shorter than `pageSize` is the last one. */
export function fetchDrawings(admin: boolean, filters: TaskFilters, page: number, pageSize: number) {
  return api.get<DrawingRow[]>(admin ? '/api/mj/' : '/api/mj/self', {
    query: { ...queryOf(filters, admin, 'mj_id'), p: page, page_size: pageSize },
  });
}

/** One server page (counted from 0) of creative tasks. */
export function fetchTasks(admin: boolean, filters: TaskFilters, page: number, pageSize: number) {
  return api.get<TaskRow[]>(admin ? '/api/task/' : '/api/task/self', {
    query: { ...queryOf(filters, admin, 'task_id'), p: page, page_size: pageSize },
  });
}
