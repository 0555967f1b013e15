import type { TFunction } from 'i18next';
import type { SiteStatus } from '../../lib/status.ts';

/**
 * Passkeys are offered where the browser has WebAuthn and the site's server address is set: the server binds
 * passkeys to that address's host name (docs/adr/0044), so without it every ceremony would fail.
 */
export function canUsePasskeys(status: SiteStatus | null | undefined): boolean {
  return (
    Boolean(status?.server_address) &&
    typeof window !== 'undefined' &&
    typeof window.PublicKeyCredential === 'function'
  );
}

/**
 * The browser half of WebAuthn, loaded when a ceremony starts: the sign-in page stays within the console's
 * initial-script budget for everyone who never uses a passkey.
 */
export const loadWebAuthn = () => import('@simplewebauthn/browser');

/** What to tell someone whose passkey ceremony failed: the browser's refusal in words, else the server's. */
export function passkeyErrorText(error: unknown, t: TFunction): string {
  const name = error instanceof Error ? error.name : '';
  if (name === 'NotAllowedError' || name === 'AbortError') return t('two-factor:passkey.cancelled');
  if (name === 'InvalidStateError') return t('two-factor:passkey.alreadyRegistered');
  return error instanceof Error ? error.message : String(error);
}
