import { describe, expect, it } from 'vitest';
import { matchTotpStep, newTotpSecret, readTotpCode, totpUri } from './totp.ts';

/**
 * RFC 6238 Appendix B (https://datatracker.ietf.org/doc/html/rfc6238#appendix-B): the SHA-1 seed is the ASCII
 * text "12345678901234567890", whose base32 is the literal below; the published 8-digit values are cut to the
 * 6 digits apps show (the value mod 10^6, RFC 4226 section 5.3).
 */
const RFC_SEED_BASE32 = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ';
const RFC_VECTORS: [unixSeconds: number, published: string][] = [
  [59, '94287082'],
  [1111111109, '07081804'],
  [1111111111, '14050471'],
  [1234567890, '89005924'],
  [2000000000, '69279037'],
  [20000000000, '65353130'],
];

describe('TOTP codes', () => {
  it.each(RFC_VECTORS)('accepts the RFC 6238 code of T=%i (%s, 6 digits) for its own step', (t, code) => {
    expect(matchTotpStep(RFC_SEED_BASE32, code.slice(2), t * 1000)).toBe(Math.floor(t / 30));
  });

  it('accepts a code one step early or late (a phone clock 30 s off) and names its step', () => {
    expect(matchTotpStep(RFC_SEED_BASE32, '287082', 59_000 + 30_000)).toBe(1);
    expect(matchTotpStep(RFC_SEED_BASE32, '287082', 59_000 - 30_000)).toBe(1);
  });

  it('refuses an expired code, a wrong code and what is not six digits', () => {
    // Three steps later the code of T=59 is out of the window.
    expect(matchTotpStep(RFC_SEED_BASE32, '287082', (59 + 90) * 1000)).toBeUndefined();
    expect(matchTotpStep(RFC_SEED_BASE32, '287083', 59_000)).toBeUndefined();
    expect(matchTotpStep(RFC_SEED_BASE32, '94287082', 59_000)).toBeUndefined();
    expect(matchTotpStep(RFC_SEED_BASE32, 'abcdef', 59_000)).toBeUndefined();
    expect(matchTotpStep('not base32!', '287082', 59_000)).toBeUndefined();
  });

  it('reads a code typed with a space as apps show it', () => {
    expect(readTotpCode(' 287 082 ')).toBe('287082');
    expect(matchTotpStep(RFC_SEED_BASE32, '287 082', 59_000)).toBe(1);
  });

  it('makes 160-bit secrets and the otpauth URI apps scan', () => {
    const secret = newTotpSecret();
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(newTotpSecret()).not.toBe(secret);
    // Key URI format: https://github.com/google/google-authenticator/wiki/Key-Uri-Format
    const text = totpUri(secret, { issuer: 'My Gateway', name: 'alice' });
    expect(text.startsWith('otpauth://totp/My%20Gateway:alice?')).toBe(true);
    const uri = new URL(text);
    expect(Object.fromEntries(uri.searchParams)).toMatchObject({
      secret,
      issuer: 'My Gateway',
      algorithm: 'SHA1',
      digits: '6',
      period: '30',
    });
  });
});
