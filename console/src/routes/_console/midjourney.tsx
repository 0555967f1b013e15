import { createFileRoute } from '@tanstack/react-router';
import { DrawingLogPage } from '../../features/tasks/components/drawing-log-page.tsx';
import { taskLogSearch } from '../../features/tasks/search.ts';

export const Route = createFileRoute('/_console/midjourney')({
  validateSearch: taskLogSearch.validate,
  component: DrawingLogPage,
});
