import { createFileRoute } from '@tanstack/react-router';
import { ChatPage } from '../features/chat/components/chat-page.tsx';

export const Route = createFileRoute('/chat/$')({
  component: function Chat() {
    const { _splat } = Route.useParams();
    return <ChatPage id={_splat} />;
  },
});
