import { createFileRoute } from '@tanstack/react-router';
import { LogsPage } from '../../features/logs/components/logs-page.tsx';
import { logsSearch } from '../../features/logs/search.ts';

export const Route = createFileRoute('/_console/log')({
  validateSearch: logsSearch.validate,
  component: LogsPage,
});
