import { createFileRoute } from '@tanstack/react-router';
import { ChannelsPage } from '../../../features/channels/components/channels-page.tsx';
import { requireUser } from '../../../lib/guards.ts';
import { Role } from '../../../lib/session.ts';

/** /channel/add: the channel list with an empty channel form open; closing it returns to /channel. */
export const Route = createFileRoute('/_console/channel/add')({
  beforeLoad: () => ({ user: requireUser(Role.Admin) }),
  component: function AddChannelRoute() {
    const navigate = Route.useNavigate();
    return <ChannelsPage open={{ mode: 'create' }} onFormClosed={() => void navigate({ to: '/channel' })} />;
  },
});
