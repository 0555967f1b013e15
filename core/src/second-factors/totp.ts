/**
 * Time-based one-time passwords as authenticator apps make them: RFC 6238 (https://datatracker.ietf.org/doc/html/rfc6238)
 * with HMAC-SHA-1, 30-second steps and 6 digits, the parameters every app and new-api use. The secret is the
 * base32 text an app scans from the `otpauth://` URI.
 */
import { Secret, TOTP } from 'otpauth';

export const TOTP_PERIOD_SECONDS = 30;
export const TOTP_DIGITS = 6;
/** Steps accepted either side of now: a phone clock 30 s off, or a code typed as it turned over. */
export const TOTP_WINDOW = 1;

/** A new secret: 160 random bits (RFC 4226's recommended length for HMAC-SHA-1), as base32. */
export function newTotpSecret(): string {
  return new Secret({ size: 20 }).base32;
}

function totpOf(secret: string, label = '', issuer = ''): TOTP {
  return new TOTP({
    issuer,
    label,
    secret: Secret.fromBase32(secret),
    algorithm: 'SHA1',
    digits: TOTP_DIGITS,
    period: TOTP_PERIOD_SECONDS,
  });
}

/** The `otpauth://totp/...` URI an authenticator app scans from the QR code. */
export function totpUri(secret: string, account: { issuer: string; name: string }): string {
  return totpOf(secret, account.name, account.issuer).toString();
}

/** The time step (Unix seconds / 30) of an instant. */
export function totpStepAt(nowMs: number): number {
  return Math.floor(nowMs / 1000 / TOTP_PERIOD_SECONDS);
}

/** Six digits, spaces allowed between them ("123 456" as apps show it). */
export function readTotpCode(input: string): string | undefined {
  const code = input.replace(/\s+/g, '');
  return /^\d{6}$/.test(code) ? code : undefined;
}

/**
 * The time step `code` belongs to when it is right within one step of `nowMs`, else undefined. The caller accepts
 * it only for a step later than the last one used, which makes every code single-use (RFC 6238 section 5.2).
 */
export function matchTotpStep(secret: string, input: string, nowMs: number = Date.now()): number | undefined {
  const token = readTotpCode(input);
  if (!token) return undefined;
  let delta: number | null;
  try {
    delta = totpOf(secret).validate({ token, timestamp: nowMs, window: TOTP_WINDOW });
  } catch {
    return undefined; // a secret that is not base32
  }
  return delta === null ? undefined : totpStepAt(nowMs) + delta;
}
