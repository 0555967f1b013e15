import { fetchTokens } from '../../tokens/api/tokens.ts';
import { TokenStatus } from '../../tokens/validation.ts';

/** How many tokens are looked at for a chat link (spec 02 section 9: the first 100). */
export const CHAT_TOKEN_PAGE_SIZE = 100;

/** The key of the user's first enabled token among the first 100, or null when none is enabled. */
export async function fetchFirstEnabledKey(): Promise<string | null> {
  const page = await fetchTokens({ keyword: '', token: '', page: 1, pageSize: CHAT_TOKEN_PAGE_SIZE });
  return page.items.find((token) => token.status === TokenStatus.Enabled)?.key ?? null;
}

export const firstEnabledKeyQuery = {
  queryKey: ['tokens', 'first-enabled-key'],
  queryFn: fetchFirstEnabledKey,
  // a key is not cached across visits: the user may have disabled it meanwhile
  staleTime: 0,
  gcTime: 0,
} as const;
