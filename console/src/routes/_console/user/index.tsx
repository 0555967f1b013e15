import { createFileRoute } from '@tanstack/react-router';
import { UsersPage } from '../../../features/users/components/users-page.tsx';
import { usersSearch } from '../../../features/users/search.ts';
import { requireUser } from '../../../lib/guards.ts';
import { Role } from '../../../lib/session.ts';

export const Route = createFileRoute('/_console/user/')({
  validateSearch: usersSearch.validate,
  beforeLoad: () => ({ user: requireUser(Role.Admin) }),
  component: UsersPage,
});
