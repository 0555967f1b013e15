import { createSealedBox, type SealedBox } from '../crypto/sealed-box.ts';

/**
 * The box that seals channel keys at rest. The API seals with it and the relay opens with it, so both must
 * derive it from the same CRYPTO_SECRET through this one function.
 */
export function createChannelKeyBox(cryptoSecret: string): SealedBox {
  return createSealedBox(cryptoSecret, 'channel-key');
}
