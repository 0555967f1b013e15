import { createFileRoute } from '@tanstack/react-router';
import { ChannelsPage } from '../../../../features/channels/components/channels-page.tsx';
import { requireUser } from '../../../../lib/guards.ts';
import { Role } from '../../../../lib/session.ts';

/** /channel/edit/{id}: the channel list with that channel's form open; closing it returns to /channel. */
export const Route = createFileRoute('/_console/channel/edit/$id')({
  beforeLoad: () => ({ user: requireUser(Role.Admin) }),
  component: function EditChannelRoute() {
    const { id } = Route.useParams();
    const navigate = Route.useNavigate();
    const channelId = Number(id);
    const toList = () => void navigate({ to: '/channel' });
    return Number.isInteger(channelId) && channelId > 0 ? (
      <ChannelsPage key={id} open={{ mode: 'edit', id: channelId }} onFormClosed={toList} />
    ) : (
      <ChannelsPage key={id} />
    );
  },
});
