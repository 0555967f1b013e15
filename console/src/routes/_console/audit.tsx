import { createFileRoute } from '@tanstack/react-router';
import { AuditPage } from '../../features/audit/components/audit-page.tsx';
import { auditSearch } from '../../features/audit/search.ts';
import { requireUser } from '../../lib/guards.ts';
import { Role } from '../../lib/session.ts';

export const Route = createFileRoute('/_console/audit')({
  validateSearch: auditSearch.validate,
  beforeLoad: () => ({ user: requireUser(Role.Root) }),
  component: AuditPage,
});
