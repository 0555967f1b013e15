/**
 * The two-factor sign-in routes in new-api's shapes (its `/api/user/2fa/*` and `/api/user/login/2fa`), so its
 * console scripts keep working; docs/adr/0044.
 */
import { z } from 'zod';

const code = z
  .string({ error: 'enter the code of your authenticator app or a backup code' })
  .trim()
  .min(1, 'enter the code of your authenticator app or a backup code')
  .max(32, 'the code is too long');

/** POST /api/user/2fa/enable, /disable, /backup_codes. */
export const twoFactorCodeSchema = z.object({ code });
export type TwoFactorCode = z.infer<typeof twoFactorCodeSchema>;

/**
 * POST /api/user/login/2fa: the code after the password. `flow_token` is what the password step answered; a
 * browser may leave it out, its cookie carries the same.
 */
export const secondStepSchema = z.object({ code, flow_token: z.string().max(2048).optional() });
export type SecondStep = z.infer<typeof secondStepSchema>;

/** GET /api/user/2fa/status. */
export interface TwoFactorStatus {
  enabled: boolean;
  /** Too many wrong codes: codes are refused until `locked_until` (Unix seconds). */
  locked: boolean;
  locked_until?: number;
  /** Unused backup codes, when enabled. */
  backup_codes_remaining?: number;
  /** An administrator who must enrol before anything else (AdminTwoFactorRequired is on). */
  enrolment_required: boolean;
}

/** POST /api/user/2fa/setup: shown once; the secret and codes are not shown again. */
export interface TwoFactorSetup {
  secret: string;
  /** The `otpauth://totp/...` URI the QR code encodes. */
  qr_code_data: string;
  backup_codes: string[];
}

/** POST /api/user/2fa/backup_codes. */
export interface BackupCodes {
  backup_codes: string[];
}

/** The answer of a right password when the user has a second factor: no session yet. */
export interface SecondStepRequired {
  require_2fa: true;
  /** Sealed, valid until `expires_at` (Unix seconds); names the user and the password step. */
  flow_token: string;
  expires_at: number;
  /** The user has passkeys, which answer the second step too. */
  passkey: boolean;
}

/** GET /api/user/2fa/stats (administrators). */
export interface TwoFactorStats {
  total_users: number;
  enabled_users: number;
  enabled_rate: string;
}

/** GET /api/user/:id/second_factors (administrators): what the user editor shows beside its reset action. */
export interface UserSecondFactors {
  totp: boolean;
  passkeys: number;
}
