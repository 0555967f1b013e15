import { integer, pgTable, text, varchar } from 'drizzle-orm/pg-core';
import { unixSeconds } from './columns.ts';

/**
 * WebAuthn challenges handed out and not yet answered. Kept in the database every process shares, so a ceremony
 * begun on one replica finishes on another with or without Redis; an answer deletes its row, so each challenge
 * works once, and a row past `expiresAt` answers nothing (docs/adr/0044).
 */
export const passkeyChallenges = pgTable('passkey_challenges', {
  /** The challenge itself, base64url, as the browser echoes it in clientDataJSON. */
  challenge: text('challenge').primaryKey(),
  /** `register`, `sign-in` (password-less) or `second-step`. */
  purpose: varchar('purpose', { length: 16 }).notNull(),
  /** The user the ceremony is for; 0 for a password-less sign-in, where the passkey names the user. */
  userId: integer('user_id').notNull().default(0),
  expiresAt: unixSeconds('expires_at').notNull(),
});

export type PasskeyChallenge = typeof passkeyChallenges.$inferSelect;
