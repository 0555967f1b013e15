import { createFileRoute } from '@tanstack/react-router';
import { Placeholder } from '../../components/layout/placeholder.tsx';

// Placeholder: the screen is built in a later slice.
export const Route = createFileRoute('/_console/playground')({
  component: () => <Placeholder title="menu.playground" />,
});
