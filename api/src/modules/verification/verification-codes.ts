import { timingSafeEqual } from 'node:crypto';
import { HEX, randomString } from '@turnpike/core/crypto/random';
import type { KvStore } from '@turnpike/core/kv/kv';

export type VerificationPurpose = 'register' | 'bind' | 'reset';

/** Codes are valid for ten minutes and work once. */
export const VERIFICATION_TTL_SECONDS = 600;

const keyOf = (purpose: VerificationPurpose, email: string) =>
  `verify:${purpose}:${email.trim().toLowerCase()}`;

const sameText = (a: string, b: string) => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

/** One-time codes kept in the shared KV store, so a code mailed by one replica is accepted by another. */
export function createVerificationCodes(kv: KvStore) {
  return {
    /** A new code for this purpose and address; it replaces any earlier one. Reset tokens are longer. */
    async issue(purpose: VerificationPurpose, email: string): Promise<string> {
      const code = purpose === 'reset' ? randomString(32, HEX) : randomString(6);
      await kv.set(keyOf(purpose, email), code, VERIFICATION_TTL_SECONDS);
      return code;
    },
    /** True exactly once for the right code; a wrong guess leaves the code in place. */
    async consume(purpose: VerificationPurpose, email: string, code: string): Promise<boolean> {
      const key = keyOf(purpose, email);
      const stored = await kv.get(key);
      if (!stored || !code || !sameText(stored, code.trim())) return false;
      return (await kv.take(key)) === stored;
    },
  };
}
export type VerificationCodes = ReturnType<typeof createVerificationCodes>;
