import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';

/**
 * Authenticated encryption (AES-256-GCM) with a key derived from a secret and a purpose, so one secret can
 * safely serve sessions and channel keys without the two ever being interchangeable.
 */
export interface SealedBox {
  seal(plaintext: string): string;
  /** Undefined when the text was not sealed by this box (wrong secret, purpose or tampering). */
  open(sealed: string): string | undefined;
}

const IV_BYTES = 12;
const TAG_BYTES = 16;

export function createSealedBox(secret: string, purpose: string): SealedBox {
  const salt = createHash('sha256').update('turnpike').digest();
  const key = Buffer.from(hkdfSync('sha256', secret, salt, purpose, 32));
  return {
    seal(plaintext) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url');
    },
    open(sealed) {
      const raw = Buffer.from(sealed, 'base64url');
      if (raw.length < IV_BYTES + TAG_BYTES) return undefined;
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV_BYTES));
        decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
        return Buffer.concat([
          decipher.update(raw.subarray(IV_BYTES, raw.length - TAG_BYTES)),
          decipher.final(),
        ]).toString('utf8');
      } catch {
        return undefined;
      }
    },
  };
}
