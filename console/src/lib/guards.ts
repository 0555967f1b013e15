import type { QueryClient } from '@tanstack/react-query';
import { redirect } from '@tanstack/react-router';
import i18next from 'i18next';
import { getSessionUser, type SessionUser } from './session.ts';
import { getCachedStatus, type SiteStatus, statusQuery } from './status.ts';
import { toast } from './toast.ts';

/** The status for a guard: the server's, or the cached copy when the server cannot be reached. */
export async function loadStatus(queryClient: QueryClient): Promise<SiteStatus | null> {
  try {
    return await queryClient.ensureQueryData(statusQuery);
  } catch {
    const cached = getCachedStatus();
    toast.error(i18next.t(cached ? 'error.statusFailed' : 'error.cannotConnect'));
    return cached;
  }
}

/** Every page except /setup goes to /setup until setup is done (spec 03 section 2). */
export async function requireSetup(queryClient: QueryClient, pathname: string): Promise<void> {
  const status = await loadStatus(queryClient);
  if (status && !status.setup && pathname !== '/setup') throw redirect({ to: '/setup' });
}

/** A visitor with no stored user is sent to /login; a user below `minRole` to /. */
export function requireUser(minRole = 0): SessionUser {
  const user = getSessionUser();
  if (!user) throw redirect({ to: '/login' });
  if (user.role < minRole) throw redirect({ to: '/' });
  return user;
}
