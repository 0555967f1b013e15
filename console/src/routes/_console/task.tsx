import { createFileRoute } from '@tanstack/react-router';
import { TaskLogPage } from '../../features/tasks/components/task-log-page.tsx';

export const Route = createFileRoute('/_console/task')({ component: TaskLogPage });
