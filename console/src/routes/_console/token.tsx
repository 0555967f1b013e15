import { createFileRoute } from '@tanstack/react-router';
import { TokensPage } from '../../features/tokens/components/tokens-page.tsx';

export const Route = createFileRoute('/_console/token')({
  component: TokensPage,
});
