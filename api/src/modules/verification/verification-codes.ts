import { timingSafeEqual } from 'node:crypto';
import { HEX, randomString } from '@turnpike/core/crypto/random';
import type { KvStore } from '@turnpike/core/kv/kv';

/**
 * `email`: the code of GET /api/verification, used by registration and by email binding (one code for both,
 * as in the reference). `reset`: the token of a password-reset link.
 */
export type VerificationPurpose = 'email' | 'reset';

/** Codes are valid for ten minutes and work once. */
export const VERIFICATION_TTL_SECONDS = 600;
/** Wrong guesses a code survives; the next one throws it away, so guessing across many IPs gets nowhere. */
export const MAX_WRONG_GUESSES = 5;
/** One mail per address and purpose in this many seconds, whoever asks (the console waits as long). */
export const RESEND_WAIT_SECONDS = 30;

const normalise = (email: string) => email.trim().toLowerCase();
const keyOf = (purpose: VerificationPurpose, email: string) => `verify:${purpose}:${normalise(email)}`;

const sameText = (a: string, b: string) => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

/** One-time codes kept in the shared KV store, so a code mailed by one replica is accepted by another. */
export function createVerificationCodes(kv: KvStore) {
  return {
    /** A new code for this purpose and address; it replaces any earlier one. Reset tokens are 32 hex digits. */
    async issue(purpose: VerificationPurpose, email: string): Promise<string> {
      const code = purpose === 'reset' ? randomString(32, HEX) : randomString(6);
      await kv.del(`${keyOf(purpose, email)}:wrong`);
      await kv.set(keyOf(purpose, email), code, VERIFICATION_TTL_SECONDS);
      return code;
    },
    /**
     * True exactly once for the right code. A wrong guess leaves the code in place, up to MAX_WRONG_GUESSES;
     * after that the code is gone and a new one must be asked for.
     */
    async consume(purpose: VerificationPurpose, email: string, code: string): Promise<boolean> {
      const key = keyOf(purpose, email);
      const stored = await kv.get(key);
      if (!stored) return false;
      if (!code || !sameText(stored, code.trim())) {
        const wrong = await kv.incr(`${key}:wrong`, VERIFICATION_TTL_SECONDS);
        if (wrong > MAX_WRONG_GUESSES) await kv.del(key);
        return false;
      }
      return (await kv.take(key)) === stored;
    },
    /** Whether a mail may go to this address now; the first caller in a RESEND_WAIT_SECONDS window wins. */
    async claimSendSlot(purpose: VerificationPurpose, email: string): Promise<boolean> {
      return (await kv.incr(`verify-sent:${purpose}:${normalise(email)}`, RESEND_WAIT_SECONDS)) === 1;
    },
    /** Gives the slot back after a failed send, so the user can retry at once. */
    async releaseSendSlot(purpose: VerificationPurpose, email: string): Promise<void> {
      await kv.del(`verify-sent:${purpose}:${normalise(email)}`);
    },
  };
}
export type VerificationCodes = ReturnType<typeof createVerificationCodes>;
