import { createFileRoute } from '@tanstack/react-router';
import { Chat2LinkPage } from '../../features/chat/components/chat2link-page.tsx';

export const Route = createFileRoute('/_console/chat2link')({ component: () => <Chat2LinkPage /> });
