import { createFileRoute } from '@tanstack/react-router';
import { TokensPage } from '../../features/tokens/components/tokens-page.tsx';
import { tokensSearch } from '../../features/tokens/search.ts';

export const Route = createFileRoute('/_console/token')({
  validateSearch: tokensSearch.validate,
  component: TokensPage,
});
