/**
 * Backup codes: one-time recovery codes shown once when made, `XXXX-XXXX` as new-api shows them. Turnpike keeps an
 * HMAC-SHA-256 of each under a key derived from CRYPTO_SECRET (the secret that seals TOTP secrets): a stolen
 * database alone does not let anyone try the 2^40 codes offline, and checking one costs no slow hash per stored
 * code. Codes imported from new-api keep the bcrypt hash new-api stored (of the `XXXX-XXXX` form) and are checked
 * with bcrypt.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import bcrypt from 'bcryptjs';
import { randomString } from '../crypto/random.ts';

/** Codes made at enrolment and at each regeneration. */
export const BACKUP_CODE_COUNT = 10;
/** Letters and digits without 0/O and 1/I, which people misread off paper: 32 symbols, 5 bits each. */
const ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
const LENGTH = 8;
const HMAC_PREFIX = 'hmac-sha256$';

/** `count` fresh codes, `XXXX-XXXX`. */
export function newBackupCodes(count = BACKUP_CODE_COUNT): string[] {
  return Array.from({ length: count }, () => {
    const raw = randomString(LENGTH, ALPHABET);
    return `${raw.slice(0, 4)}-${raw.slice(4)}`;
  });
}

/**
 * The `XXXX-XXXX` form of what someone typed (any case, with or without the dash or spaces), or undefined when it
 * cannot be a backup code. new-api's codes use every letter and digit, so the check is on A-Z and 0-9.
 */
export function normaliseBackupCode(input: string): string | undefined {
  const raw = input.toUpperCase().replace(/[\s-]+/g, '');
  if (!/^[A-Z0-9]{8}$/.test(raw)) return undefined;
  return `${raw.slice(0, 4)}-${raw.slice(4)}`;
}

/** The stored form of a code (already normalised) under `key`. */
export function hashBackupCode(key: Buffer, code: string): string {
  return HMAC_PREFIX + createHmac('sha256', key).update(code).digest('base64url');
}

/**
 * The id of the stored code `input` matches, else undefined. Turnpike's own hashes are compared first (cheap);
 * imported bcrypt hashes only when none of those matched.
 */
export async function matchBackupCode(
  key: Buffer,
  input: string,
  stored: readonly { id: number; codeHash: string }[],
): Promise<number | undefined> {
  const code = normaliseBackupCode(input);
  if (!code) return undefined;
  const mine = Buffer.from(hashBackupCode(key, code));
  let found: number | undefined;
  // Every own hash is compared, so the time taken does not tell which position matched.
  for (const { id, codeHash } of stored) {
    const theirs = Buffer.from(codeHash);
    if (theirs.length === mine.length && timingSafeEqual(theirs, mine)) found ??= id;
  }
  if (found !== undefined) return found;
  for (const { id, codeHash } of stored) {
    if (/^\$2[aby]\$\d\d\$/.test(codeHash) && (await bcrypt.compare(code, codeHash))) return id;
  }
  return undefined;
}
