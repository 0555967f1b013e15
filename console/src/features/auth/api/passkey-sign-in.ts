import type { startAuthentication } from '@simplewebauthn/browser';
import { api } from '../../../lib/api.ts';
import { loadWebAuthn } from '../passkeys.ts';
import type { SignedIn } from './second-step.ts';

type RequestOptionsJSON = Parameters<typeof startAuthentication>[0]['optionsJSON'];

/**
 * Signs in with a passkey: POST /api/user/passkey/login/begin, the browser's authenticator, then /finish. With
 * `flowToken` (the password step's) it is the second step; without, a password-less sign-in.
 */
export async function signInWithPasskey(flowToken?: string): Promise<SignedIn> {
  const body = flowToken ? { flow_token: flowToken } : {};
  const { options } = await api.post<{ options: RequestOptionsJSON }>('/api/user/passkey/login/begin', body, {
    silent: true,
  });
  const { startAuthentication: authenticate } = await loadWebAuthn();
  const answer = await authenticate({ optionsJSON: options });
  return api.post<SignedIn>('/api/user/passkey/login/finish', { ...answer, ...body }, { silent: true });
}
