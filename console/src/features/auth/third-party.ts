/**
 * Third-party sign-in: the providers that send the browser to their own authorization page (GitHub, OIDC,
 * LinuxDO) come back to /oauth/<provider> with a code; the server turns that into a sign-in, or a binding when
 * the browser is already signed in. One place builds their addresses, for the sign-in buttons and the bindings.
 */
import type { SecondStepRequired } from '@turnpike/core/contracts/two-factor';
import i18next from 'i18next';
import { api, requestEnvelope } from '../../lib/api.ts';
import type { SessionUser } from '../../lib/session.ts';
import type { SiteStatus } from '../../lib/status.ts';
import { readStored, StorageKey } from '../../lib/storage.ts';
import { toast } from '../../lib/toast.ts';
import { type LoginAnswer, needsSecondStep } from './api/second-step.ts';

export type RedirectProvider = 'github' | 'oidc' | 'linuxdo';

export const isRedirectProvider = (name: string): name is RedirectProvider =>
  name === 'github' || name === 'oidc' || name === 'linuxdo';

/** Whether the status carries what the provider's address needs (its client id, OIDC's endpoint). */
function isRedirectConfigured(provider: RedirectProvider, status: SiteStatus): boolean {
  if (provider === 'github') return Boolean(status.github_client_id);
  if (provider === 'oidc') return Boolean(status.oidc_client_id && status.oidc_authorization_endpoint);
  return Boolean(status.linuxdo_client_id);
}

/** The provider's authorization page for this site, carrying `state` back to the callback. */
export function authorizeUrl(
  provider: RedirectProvider,
  status: SiteStatus,
  state: string,
  origin: string,
): string {
  const enc = encodeURIComponent;
  if (provider === 'github') {
    return `https://github.com/login/oauth/authorize?client_id=${enc(status.github_client_id)}&state=${enc(state)}&scope=user:email`;
  }
  if (provider === 'oidc') {
    const endpoint = status.oidc_authorization_endpoint;
    // an endpoint may carry its own query (a tenant, a policy): ours is appended to it
    const joiner = endpoint.includes('?') ? '&' : '?';
    return `${endpoint}${joiner}client_id=${enc(status.oidc_client_id)}&redirect_uri=${enc(`${origin}/oauth/oidc`)}&response_type=code&scope=openid+profile+email&state=${enc(state)}`;
  }
  return `https://connect.linux.do/oauth2/authorize?response_type=code&client_id=${enc(status.linuxdo_client_id)}&state=${enc(state)}`;
}

/** Leaves the console for another address; replaced in tests. */
let leaveFor = (url: string): void => window.location.assign(url);
export function setLeaveFor(fn: (url: string) => void): void {
  leaveFor = fn;
}

/** GET /api/oauth/state: a one-time state kept in the server session, with the invite code from /register?aff=. */
function fetchOAuthState(): Promise<string> {
  const aff = readStored(StorageKey.AffCode);
  return api.get<string>('/api/oauth/state', { query: { aff: aff || undefined } });
}

/**
 * Asks the server for a state, then sends the browser to the provider. Answers false when the browser stays
 * (the provider is not configured, or the state request failed; a toast says which).
 */
export async function startRedirectSignIn(provider: RedirectProvider, status: SiteStatus): Promise<boolean> {
  if (!isRedirectConfigured(provider, status)) {
    toast.error(i18next.t('oauth.notConfigured'));
    return false;
  }
  let state: string;
  try {
    state = await fetchOAuthState();
  } catch {
    return false; // the request client has shown why
  }
  leaveFor(authorizeUrl(provider, status, state, window.location.origin));
  return true;
}

/**
 * What a callback came to: a sign-in, a binding to the signed-in user (the server answers message "bind"), or the
 * second step a user with a second factor owes before the sign-in is complete (docs/adr/0044).
 */
type CallbackOutcome =
  | { bound: true }
  | { bound: false; user: SessionUser }
  | { bound: false; secondStep: SecondStepRequired };

/** GET /api/oauth/<provider>?code=&state=: completes the callback. */
export async function finishRedirectSignIn(
  provider: RedirectProvider,
  code: string,
  state: string,
): Promise<CallbackOutcome> {
  const envelope = await requestEnvelope<LoginAnswer>('GET', `/api/oauth/${provider}`, {
    query: { code, state },
    silent: true,
  });
  if (envelope.message === 'bind') return { bound: true };
  const answer = envelope.data as LoginAnswer;
  return needsSecondStep(answer) ? { bound: false, secondStep: answer } : { bound: false, user: answer };
}
