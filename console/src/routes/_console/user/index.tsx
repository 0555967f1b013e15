import { createFileRoute } from '@tanstack/react-router';
import { Placeholder } from '../../../components/layout/placeholder.tsx';
import { requireUser } from '../../../lib/guards.ts';
import { Role } from '../../../lib/session.ts';

// Placeholder: the screen is built in a later slice.
export const Route = createFileRoute('/_console/user/')({
  beforeLoad: () => ({ user: requireUser(Role.Admin) }),
  component: () => <Placeholder title="menu.users" />,
});
