import { createFileRoute } from '@tanstack/react-router';
import { PlansAdminPage } from '../../features/plans/components/plans-admin-page.tsx';
import { requireUser } from '../../lib/guards.ts';
import { Role } from '../../lib/session.ts';

export const Route = createFileRoute('/_console/plans')({
  beforeLoad: () => ({ user: requireUser(Role.Admin) }),
  component: PlansAdminPage,
});
