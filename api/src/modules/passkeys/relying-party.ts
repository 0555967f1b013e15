import { AppError } from '@turnpike/core/errors';
import type { OptionStore } from '@turnpike/core/options/store';

/** Who passkeys are made for: the site's name, its origin and the RP ID (its host name). */
export interface RelyingParty {
  readonly name: string;
  readonly origin: string;
  readonly id: string;
}

export const SERVER_ADDRESS_NEEDED =
  'passkeys need the server address (Settings, system) to be set to the address people open the console at';

/**
 * The relying party from the ServerAddress option, never from the request: a passkey is bound to one host name,
 * and a Host header is the caller's to choose. Without the option, passkeys are unavailable.
 */
export function relyingPartyOf(options: OptionStore): RelyingParty {
  const address = options.get('ServerAddress').trim();
  let url: URL;
  try {
    url = new URL(address);
  } catch {
    throw new AppError('FEATURE_DISABLED', SERVER_ADDRESS_NEEDED);
  }
  return { name: options.get('SystemName'), origin: url.origin, id: url.hostname };
}
