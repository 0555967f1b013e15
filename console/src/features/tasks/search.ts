import { listSearch, textParam } from '../../components/data-table/index.ts';

/**
 * The URL of both task logs (drawing and creative): task id, channel and range. An absent `start` or `end` is the
 * page's default range, so a bare link always shows the recent tasks. The page is not in the URL: the task lists
 * answer no total and load page after page (use-server-pages.ts), so a later page cannot be opened directly.
 */
export const taskLogSearch = listSearch({
  taskId: textParam,
  channel: textParam,
  start: textParam,
  end: textParam,
});
