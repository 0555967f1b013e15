import { createFileRoute } from '@tanstack/react-router';
import { ChannelsPage } from '../../../features/channels/components/channels-page.tsx';
import { channelsSearch } from '../../../features/channels/search.ts';
import { requireUser } from '../../../lib/guards.ts';
import { Role } from '../../../lib/session.ts';

export const Route = createFileRoute('/_console/channel/')({
  validateSearch: channelsSearch.validate,
  beforeLoad: () => ({ user: requireUser(Role.Admin) }),
  component: () => <ChannelsPage />,
});
