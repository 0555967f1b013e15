import { hkdfSync } from 'node:crypto';
import { createSealedBox } from '../crypto/sealed-box.ts';

/**
 * What protects second factors at rest, derived from CRYPTO_SECRET as channel keys are (each purpose its own key,
 * so none opens another's): the box that seals TOTP secrets and the key of backup-code hashes. The console API
 * and the import derive it through this one function.
 */
export function createSecondFactorKeys(cryptoSecret: string) {
  const box = createSealedBox(cryptoSecret, 'two-factor-secret');
  return {
    sealSecret: (secret: string) => box.seal(secret),
    /** Undefined when the text was not sealed under this CRYPTO_SECRET. */
    openSecret: (sealed: string) => box.open(sealed),
    backupCodeKey: Buffer.from(hkdfSync('sha256', cryptoSecret, 'turnpike', 'two-factor-backup-code', 32)),
  };
}
export type SecondFactorKeys = ReturnType<typeof createSecondFactorKeys>;
