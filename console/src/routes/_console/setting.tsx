import { createFileRoute } from '@tanstack/react-router';
import { SettingsPage } from '../../features/settings/components/settings-page.tsx';
import { parseSettingsTab, type SettingsTab } from '../../features/settings/tabs.ts';
import { requireUser } from '../../lib/guards.ts';
import { Role } from '../../lib/session.ts';

export const Route = createFileRoute('/_console/setting')({
  validateSearch: (search: Record<string, unknown>): { tab?: SettingsTab } =>
    search.tab === undefined ? {} : { tab: parseSettingsTab(search.tab) },
  beforeLoad: () => ({ user: requireUser(Role.Admin) }),
  component: SettingRoute,
});

function SettingRoute() {
  const { tab } = Route.useSearch();
  const navigate = Route.useNavigate();
  return (
    <SettingsPage tab={tab ?? 'operation'} onTabChange={(next) => void navigate({ search: { tab: next } })} />
  );
}
