import { createFileRoute } from '@tanstack/react-router';
import { TaskLogPage } from '../../features/tasks/components/task-log-page.tsx';
import { taskLogSearch } from '../../features/tasks/search.ts';

export const Route = createFileRoute('/_console/task')({
  validateSearch: taskLogSearch.validate,
  component: TaskLogPage,
});
