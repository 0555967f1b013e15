import { createFileRoute } from '@tanstack/react-router';
import { RedemptionsPage } from '../../features/redemptions/components/redemptions-page.tsx';
import { redemptionsSearch } from '../../features/redemptions/search.ts';
import { requireUser } from '../../lib/guards.ts';
import { Role } from '../../lib/session.ts';

export const Route = createFileRoute('/_console/redemption')({
  validateSearch: redemptionsSearch.validate,
  beforeLoad: () => ({ user: requireUser(Role.Admin) }),
  component: RedemptionsPage,
});
