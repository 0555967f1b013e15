import { createFileRoute } from '@tanstack/react-router';
import { PlaygroundPage } from '../../features/playground/components/playground-page.tsx';

export const Route = createFileRoute('/_console/playground')({
  validateSearch: (search: Record<string, unknown>): { expired?: boolean } =>
    search.expired === true || search.expired === 'true' ? { expired: true } : {},
  component: function Playground() {
    const { expired } = Route.useSearch();
    return <PlaygroundPage expired={Boolean(expired)} />;
  },
});
