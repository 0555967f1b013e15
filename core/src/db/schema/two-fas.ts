import { bigint, boolean, integer, pgTable, serial, text } from 'drizzle-orm/pg-core';
import { unixSeconds } from './columns.ts';

/**
 * A user's authenticator-app (TOTP, RFC 6238) second factor, one row per user (docs/adr/0044). A row with
 * `isEnabled` false is an enrolment begun and not yet confirmed with a code; it guards nothing.
 */
export const twoFas = pgTable('two_fas', {
  id: serial('id').primaryKey(),
  userId: integer('user_id').notNull().unique(),
  /** The base32 TOTP secret, sealed with CRYPTO_SECRET like channel keys (core/src/second-factors/factor-box.ts). */
  secret: text('secret').notNull(),
  isEnabled: boolean('is_enabled').notNull().default(false),
  /**
   * The RFC 6238 time step (Unix seconds / 30) of the last code accepted. A code is accepted only for a later step,
   * so a code seen once (over a shoulder, in a proxy's log) is refused for the rest of its window.
   */
  lastUsedStep: bigint('last_used_step', { mode: 'number' }).notNull().default(0),
  /** Wrong codes since the last right one; each fifth locks the factor for longer (`lockedUntil`). */
  failedAttempts: integer('failed_attempts').notNull().default(0),
  lockedUntil: unixSeconds('locked_until').notNull().default(0),
  lastUsedAt: unixSeconds('last_used_at').notNull().default(0),
  createdAt: unixSeconds('created_at').notNull().default(0),
});

export type TwoFa = typeof twoFas.$inferSelect;
export type NewTwoFa = typeof twoFas.$inferInsert;
