import type { startRegistration } from '@simplewebauthn/browser';
import type { PasskeyStatus } from '@turnpike/core/contracts/passkeys';
import { api } from '../../../lib/api.ts';
import { loadWebAuthn } from '../../auth/passkeys.ts';

type CreationOptionsJSON = Parameters<typeof startRegistration>[0]['optionsJSON'];

/** new-api's /api/user/passkey* with several named passkeys (docs/adr/0044). */
export const passkeysQueryKey = ['passkeys'] as const;
export const fetchPasskeys = () => api.get<PasskeyStatus>('/api/user/passkey');

/** Begin, the browser's authenticator makes the passkey, finish with its name. */
export async function registerPasskey(name: string): Promise<void> {
  const { options } = await api.post<{ options: CreationOptionsJSON }>('/api/user/passkey/register/begin');
  const { startRegistration: register } = await loadWebAuthn();
  const answer = await register({ optionsJSON: options });
  await api.post<void>('/api/user/passkey/register/finish', { ...answer, name }, { silent: true });
}

export const removePasskey = (id: number) => api.delete<void>(`/api/user/passkey/${id}`);
