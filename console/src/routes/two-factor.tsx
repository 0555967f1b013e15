import { createFileRoute } from '@tanstack/react-router';
import { EnrolmentPage } from '../features/auth/components/enrolment-page.tsx';
import { requireUser } from '../lib/guards.ts';

/** Outside the console layout: an administrator who must enrol can call nothing else yet (docs/adr/0044). */
export const Route = createFileRoute('/two-factor')({
  beforeLoad: () => ({ user: requireUser() }),
  component: EnrolmentPage,
});
