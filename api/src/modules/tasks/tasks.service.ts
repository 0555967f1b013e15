import {
  type AdminDrawingQuery,
  type AdminTaskQuery,
  type DrawingView,
  type TaskView,
  toDrawingView,
  toTaskView,
} from '@turnpike/core/contracts/tasks';
import type { Midjourney } from '@turnpike/core/db/schema/midjourneys';
import type { User } from '@turnpike/core/db/schema/users';
import { createTaskRepo } from '@turnpike/core/repos/task.repo';
import type { AppDeps } from '../../deps.ts';

type DrawingQuery = Omit<AdminDrawingQuery, 'channel_id'> & { channel_id?: number | undefined };
type TaskQuery = Omit<AdminTaskQuery, 'channel_id'> & { channel_id?: number | undefined };

const pageOf = (query: { p: number; page_size: number }) => ({
  offset: query.p * query.page_size,
  limit: query.page_size,
});

/** The drawing-task and creative-task logs: administrators see every task, users their own. */
export function createTasksService(deps: AppDeps) {
  const repo = createTaskRepo(deps.db);

  /** With MjForwardUrlEnabled, images load through this gateway's proxy instead of the upstream's address. */
  function imageUrlOf(row: Midjourney): string {
    if (!row.imageUrl || !deps.options.get('MjForwardUrlEnabled')) return row.imageUrl;
    return `${deps.options.get('ServerAddress')}/mj/image/${encodeURIComponent(row.mjId)}`;
  }

  async function drawings(query: DrawingQuery, scope: { user?: User }): Promise<DrawingView[]> {
    const rows = await repo.listDrawings(
      {
        userId: scope.user?.id,
        channelId: scope.user ? undefined : query.channel_id,
        upstreamId: query.mj_id,
        start: query.start_timestamp,
        end: query.end_timestamp,
      },
      pageOf(query),
    );
    return rows.map((row) => toDrawingView(row, { admin: !scope.user, imageUrl: imageUrlOf(row) }));
  }

  async function creativeTasks(query: TaskQuery, scope: { user?: User }): Promise<TaskView[]> {
    const rows = await repo.listTasks(
      {
        userId: scope.user?.id,
        channelId: scope.user ? undefined : query.channel_id,
        upstreamId: query.task_id,
        start: query.start_timestamp,
        end: query.end_timestamp,
      },
      pageOf(query),
    );
    return rows.map((row) => toTaskView(row, { admin: !scope.user }));
  }

  return {
    listAllDrawings: (query: AdminDrawingQuery) => drawings(query, {}),
    listOwnDrawings: (user: User, query: DrawingQuery) => drawings(query, { user }),
    listAllTasks: (query: AdminTaskQuery) => creativeTasks(query, {}),
    listOwnTasks: (user: User, query: TaskQuery) => creativeTasks(query, { user }),
  };
}
