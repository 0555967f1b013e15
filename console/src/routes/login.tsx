import { createFileRoute } from '@tanstack/react-router';
import { LoginForm } from '../features/auth/components/login-form.tsx';

export const Route = createFileRoute('/login')({
  validateSearch: (search: Record<string, unknown>): { expired?: boolean } =>
    search.expired === true || search.expired === 'true' ? { expired: true } : {},
  component: function Login() {
    const { expired } = Route.useSearch();
    return <LoginForm expired={Boolean(expired)} />;
  },
});
