import { createFileRoute, Outlet } from '@tanstack/react-router';
import { ConsoleLayout } from '../components/layout/console-layout.tsx';
import { requireUser } from '../lib/guards.ts';

/** The signed-in area: every child route is behind the login guard. */
export const Route = createFileRoute('/_console')({
  beforeLoad: () => ({ user: requireUser() }),
  component: () => (
    <ConsoleLayout>
      <Outlet />
    </ConsoleLayout>
  ),
});
