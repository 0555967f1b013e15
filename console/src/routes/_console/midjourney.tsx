import { createFileRoute } from '@tanstack/react-router';
import { DrawingLogPage } from '../../features/tasks/components/drawing-log-page.tsx';

export const Route = createFileRoute('/_console/midjourney')({ component: DrawingLogPage });
