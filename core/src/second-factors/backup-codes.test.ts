import { describe, expect, it } from 'vitest';
import { hashBackupCode, matchBackupCode, newBackupCodes, normaliseBackupCode } from './backup-codes.ts';
import { createSecondFactorKeys } from './factor-box.ts';

const keys = createSecondFactorKeys('backup-code-test-secret-0123456789');

/**
 * bcrypt hashes of `K7QX-9M2P` and `ABCD-1234` as new-api stores backup codes (bcrypt at cost 10 of the
 * `XXXX-XXXX` form), made with pyca/bcrypt 3.2.2 (Debian's python3-bcrypt, the OpenBSD C implementation), not with
 * the bcryptjs the check uses.
 */
const NEW_API_HASHES = [
  { id: 7, codeHash: '$2a$10$zewgKS7Qyt/ILYaa0nTMM./PSkHpv/PKkZ/71MRkl7Z1dZlBPPHrS' },
  { id: 8, codeHash: '$2a$10$Wkc4q3Qxi8IXKG2yoRZI6utvcWSsBA3uU6fwDTHNn.gcK59mfaR/K' },
];

describe('backup codes', () => {
  it('makes ten distinct XXXX-XXXX codes without look-alike characters', () => {
    const codes = newBackupCodes();
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    for (const code of codes) expect(code).toMatch(/^[A-HJ-NP-Z2-9]{4}-[A-HJ-NP-Z2-9]{4}$/);
  });

  it('reads a code typed in any case, with or without its dash', () => {
    expect(normaliseBackupCode('k7qx 9m2p')).toBe('K7QX-9M2P');
    expect(normaliseBackupCode('K7QX9M2P')).toBe('K7QX-9M2P');
    expect(normaliseBackupCode('K7QX-9M2')).toBeUndefined();
    expect(normaliseBackupCode('123456')).toBeUndefined();
  });

  it('finds the stored code a typed one matches, and nothing for another code', async () => {
    const [first, second] = newBackupCodes(2) as [string, string];
    const stored = [
      { id: 1, codeHash: hashBackupCode(keys.backupCodeKey, first) },
      { id: 2, codeHash: hashBackupCode(keys.backupCodeKey, second) },
    ];
    expect(stored[0]?.codeHash).not.toContain(first.replace('-', ''));
    expect(await matchBackupCode(keys.backupCodeKey, second.toLowerCase(), stored)).toBe(2);
    expect(await matchBackupCode(keys.backupCodeKey, 'ZZZZ-ZZZZ', stored)).toBeUndefined();
  });

  it('a hash made under another CRYPTO_SECRET does not match', async () => {
    const [code] = newBackupCodes(1) as [string];
    const other = createSecondFactorKeys('another-crypto-secret-9876543210');
    const stored = [{ id: 1, codeHash: hashBackupCode(other.backupCodeKey, code) }];
    expect(await matchBackupCode(keys.backupCodeKey, code, stored)).toBeUndefined();
  });

  it("checks codes carried from new-api against new-api's bcrypt hashes", async () => {
    expect(await matchBackupCode(keys.backupCodeKey, 'abcd1234', NEW_API_HASHES)).toBe(8);
    expect(await matchBackupCode(keys.backupCodeKey, 'K7QX-9M2P', NEW_API_HASHES)).toBe(7);
    expect(await matchBackupCode(keys.backupCodeKey, 'K7QX-9M2Q', NEW_API_HASHES)).toBeUndefined();
  });
});
