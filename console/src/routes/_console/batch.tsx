import { createFileRoute } from '@tanstack/react-router';
import { BatchesPage } from '../../features/batches/components/batches-page.tsx';

export const Route = createFileRoute('/_console/batch')({
  component: BatchesPage,
});
