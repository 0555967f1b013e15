import { createFileRoute } from '@tanstack/react-router';
import { ChannelsPage } from '../../../features/channels/components/channels-page.tsx';
import { requireUser } from '../../../lib/guards.ts';
import { Role } from '../../../lib/session.ts';

export const Route = createFileRoute('/_console/channel/')({
  beforeLoad: () => ({ user: requireUser(Role.Admin) }),
  component: () => <ChannelsPage />,
});
