import { bigint, boolean, index, integer, jsonb, pgTable, serial, text, varchar } from 'drizzle-orm/pg-core';
import { unixSeconds } from './columns.ts';

/**
 * WebAuthn credentials (passkeys) a user registered, several per user, each with a name (docs/adr/0044). The
 * public key only: the private key never leaves the authenticator, so nothing here needs sealing.
 */
export const passkeyCredentials = pgTable(
  'passkey_credentials',
  {
    id: serial('id').primaryKey(),
    userId: integer('user_id').notNull(),
    name: varchar('name', { length: 64 }).notNull().default(''),
    /** The credential id, base64url as WebAuthn's JSON carries it (new-api's standard base64 is converted). */
    credentialId: text('credential_id').notNull().unique(),
    /** The COSE-encoded public key, base64url. */
    publicKey: text('public_key').notNull(),
    /** The authenticator's signature counter at the last use; 0 for authenticators that keep none. */
    signCount: bigint('sign_count', { mode: 'number' }).notNull().default(0),
    /** How the browser may reach the authenticator (`usb`, `internal`, `hybrid`, ...). */
    transports: jsonb('transports').$type<string[]>().notNull().default([]),
    /** The authenticator model's AAGUID (a UUID), '' when the authenticator gives none. */
    aaguid: varchar('aaguid', { length: 36 }).notNull().default(''),
    /** Synced passkey (may be backed up) as the authenticator said at registration. */
    backupEligible: boolean('backup_eligible').notNull().default(false),
    lastUsedAt: unixSeconds('last_used_at').notNull().default(0),
    createdAt: unixSeconds('created_at').notNull().default(0),
  },
  (t) => [index('idx_passkey_credentials_user_id').on(t.userId)],
);

export type PasskeyCredential = typeof passkeyCredentials.$inferSelect;
export type NewPasskeyCredential = typeof passkeyCredentials.$inferInsert;
