/**
 * new-api's second factors, carried so that a user who had them still needs them after the move (issue 43,
 * docs/adr/0044). How new-api keeps them (github.com/QuantumNous/new-api model/twofa.go, model/passkey.go):
 * - `two_fas`: one row per user, `secret` the base32 TOTP secret in the clear, `is_enabled` false while an enrolment
 *   is unfinished; GORM soft deletes (`deleted_at`).
 * - `two_fa_backup_codes`: bcrypt of the `XXXX-XXXX` code, `is_used` once spent.
 * - `passkey_credentials`: `credential_id`, `public_key` (COSE) and `aaguid` as standard base64, `transports` a JSON
 *   array, `sign_count`.
 * Turnpike seals the secret with CRYPTO_SECRET, keeps the bcrypt hashes as they are (checked with bcrypt), and turns
 * the base64 into base64url, WebAuthn's JSON form. The mappers are pure; the importer reads and writes.
 */
import type { NewPasskeyCredential, NewTwoFa, NewTwoFaBackupCode } from '../db/schema/index.ts';
import { TOTP_PERIOD_SECONDS } from '../second-factors/totp.ts';
import type { Mapped, TableMapping } from './mapping.ts';
import { toBool, toInt, toJson, toText, toTime } from './values.ts';

const seconds = (value: unknown): number => {
  const time = toTime(value);
  return time ? Math.floor(time.getTime() / 1000) : 0;
};
const deleted = (value: unknown) => toTime(value) !== null;

/** Standard base64 (new-api's) as base64url; undefined when it is not base64 at all. */
function toBase64Url(value: unknown): string | undefined {
  const text = toText(value).trim();
  if (!text || !/^[A-Za-z0-9+/_-]+=*$/.test(text)) return undefined;
  const bytes = Buffer.from(text.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  return bytes.length > 0 ? bytes.toString('base64url') : undefined;
}

/** 16 bytes of standard base64 as a UUID; '' for none or all zeros (authenticators that name no model). */
function toAaguid(value: unknown): string {
  const bytes = Buffer.from(toText(value), 'base64');
  if (bytes.length !== 16 || bytes.every((b) => b === 0)) return '';
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The secret is sealed by the importer; the mapper leaves it in the clear for that one step. */
export type PlainTwoFa = Omit<NewTwoFa, 'secret'> & { plainSecret: string };

export const twoFaMapping: TableMapping<PlainTwoFa> = {
  reads: ['user_id', 'secret', 'is_enabled', 'last_used_at', 'created_at', 'deleted_at'],
  drops: {
    failed_attempts: 'wrong codes are counted afresh',
    locked_until: 'wrong codes are counted afresh',
    updated_at: 'Turnpike has no such field',
  },
  map(r): Mapped<PlainTwoFa> {
    if (deleted(r.deleted_at)) return { skip: 'deleted in the source' };
    if (!toBool(r.is_enabled)) return { skip: 'an enrolment never finished (it guarded nothing)' };
    const secret = toText(r.secret).trim().toUpperCase().replace(/=+$/, '');
    if (!/^[A-Z2-7]{16,}$/.test(secret)) return { skip: 'a secret that is not base32' };
    const lastUsedAt = seconds(r.last_used_at);
    return {
      row: {
        userId: toInt(r.user_id),
        plainSecret: secret,
        isEnabled: true,
        // The step of the last code new-api accepted, and the next (its window): not accepted again here.
        lastUsedStep: lastUsedAt ? Math.floor(lastUsedAt / TOTP_PERIOD_SECONDS) + 1 : 0,
        lastUsedAt,
        createdAt: seconds(r.created_at),
      },
    };
  },
};

export const backupCodeMapping: TableMapping<NewTwoFaBackupCode> = {
  reads: ['user_id', 'code_hash', 'is_used', 'created_at', 'deleted_at'],
  drops: { used_at: 'spent codes are not carried' },
  map(r): Mapped<NewTwoFaBackupCode> {
    if (deleted(r.deleted_at)) return { skip: 'deleted in the source' };
    if (toBool(r.is_used)) return { skip: 'already used in the source' };
    const codeHash = toText(r.code_hash).trim();
    if (!/^\$2[aby]\$\d\d\$/.test(codeHash)) return { skip: 'not a bcrypt hash' };
    return { row: { userId: toInt(r.user_id), codeHash, createdAt: seconds(r.created_at) } };
  },
};

export const passkeyMapping: TableMapping<NewPasskeyCredential> = {
  reads: [
    'user_id',
    'credential_id',
    'public_key',
    'aaguid',
    'sign_count',
    'backup_eligible',
    'transports',
    'last_used_at',
    'created_at',
    'deleted_at',
  ],
  drops: {
    attestation_type: 'attestation is not checked ("none")',
    clone_warning: 'the signature counter is checked at each use instead',
    user_present: 'read from each assertion',
    user_verified: 'read from each assertion',
    backup_state: 'read from each assertion',
    attachment: 'Turnpike has no such field',
    updated_at: 'Turnpike has no such field',
  },
  map(r): Mapped<NewPasskeyCredential> {
    if (deleted(r.deleted_at)) return { skip: 'deleted in the source' };
    const credentialId = toBase64Url(r.credential_id);
    const publicKey = toBase64Url(r.public_key);
    if (!credentialId || !publicKey) return { skip: 'a credential id or public key that is not base64' };
    const transports = toJson(r.transports);
    return {
      row: {
        userId: toInt(r.user_id),
        name: 'Passkey (carried over)',
        credentialId,
        publicKey,
        signCount: Math.max(0, toInt(r.sign_count)),
        transports: Array.isArray(transports) ? transports.filter((t) => typeof t === 'string') : [],
        aaguid: toAaguid(r.aaguid),
        backupEligible: toBool(r.backup_eligible),
        lastUsedAt: seconds(r.last_used_at),
        createdAt: seconds(r.created_at),
      },
    };
  },
};
