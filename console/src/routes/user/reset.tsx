import { createFileRoute } from '@tanstack/react-router';
import { ResetConfirmForm } from '../../features/auth/components/reset-confirm-form.tsx';

/** The link in the reset email: /user/reset?email=&token=. */
export const Route = createFileRoute('/user/reset')({
  validateSearch: (search: Record<string, unknown>): { email?: string; token?: string } => ({
    ...(typeof search.email === 'string' ? { email: search.email } : {}),
    ...(typeof search.token === 'string' ? { token: search.token } : {}),
  }),
  component: function ResetConfirm() {
    const { email, token } = Route.useSearch();
    return <ResetConfirmForm email={email ?? ''} token={token ?? ''} />;
  },
});
