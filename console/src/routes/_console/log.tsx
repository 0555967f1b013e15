import { createFileRoute } from '@tanstack/react-router';
import { LogsPage } from '../../features/logs/components/logs-page.tsx';

export const Route = createFileRoute('/_console/log')({ component: LogsPage });
