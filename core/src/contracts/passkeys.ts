/**
 * The passkey (WebAuthn) routes in new-api's shapes (`/api/user/passkey*`), with several named passkeys per user;
 * docs/adr/0044. The ceremony bodies are WebAuthn's JSON (as @simplewebauthn/browser makes them); the server's
 * WebAuthn library checks them in depth, this only keeps out what is not even that shape.
 */
import { z } from 'zod';

export const PASSKEY_NAME_MAX = 64;

const base64url = z
  .string()
  .max(16_384)
  .regex(/^[A-Za-z0-9_-]*$/, 'must be base64url');

/** POST /api/user/passkey/register/finish: WebAuthn's RegistrationResponseJSON, and the passkey's name. */
export const passkeyRegistrationSchema = z.looseObject({
  id: base64url.min(1),
  rawId: base64url.min(1),
  type: z.literal('public-key'),
  response: z.looseObject({ clientDataJSON: base64url.min(1), attestationObject: base64url.min(1) }),
  name: z.string().trim().max(PASSKEY_NAME_MAX).optional(),
});
export type PasskeyRegistration = z.infer<typeof passkeyRegistrationSchema>;

/** POST /api/user/passkey/login/begin: with the password step's `flow_token` the passkey is the second step. */
export const passkeySignInBeginSchema = z.object({ flow_token: z.string().max(2048).optional() });

/** POST /api/user/passkey/login/finish: WebAuthn's AuthenticationResponseJSON. */
export const passkeyAssertionSchema = z.looseObject({
  id: base64url.min(1),
  rawId: base64url.min(1),
  type: z.literal('public-key'),
  response: z.looseObject({
    clientDataJSON: base64url.min(1),
    authenticatorData: base64url.min(1),
    signature: base64url.min(1),
    userHandle: base64url.optional(),
  }),
  flow_token: z.string().max(2048).optional(),
});
export type PasskeyAssertion = z.infer<typeof passkeyAssertionSchema>;

/** PUT /api/user/passkey/:id. */
export const passkeyRenameSchema = z.object({
  name: z.string().trim().min(1, 'a name is required').max(PASSKEY_NAME_MAX),
});

/** One passkey as its owner sees it. */
export interface PasskeyView {
  id: number;
  name: string;
  created_at: number;
  /** Unix seconds; 0 before its first use. */
  last_used_at: number;
  backup_eligible: boolean;
}

/** GET /api/user/passkey: new-api's `enabled` and `last_used_at`, and the list. */
export interface PasskeyStatus {
  enabled: boolean;
  last_used_at: number | null;
  passkeys: PasskeyView[];
}
