import { index, integer, pgTable, serial, text } from 'drizzle-orm/pg-core';
import { unixSeconds } from './columns.ts';

/**
 * One-time recovery codes of a user's TOTP factor, shown once when made. Only a hash is kept: an HMAC under
 * CRYPTO_SECRET for Turnpike's own, the bcrypt hash as new-api stored it for imported ones (docs/adr/0044).
 */
export const twoFaBackupCodes = pgTable(
  'two_fa_backup_codes',
  {
    id: serial('id').primaryKey(),
    userId: integer('user_id').notNull(),
    codeHash: text('code_hash').notNull(),
    /** When the code was spent; 0 while it is unused. */
    usedAt: unixSeconds('used_at').notNull().default(0),
    createdAt: unixSeconds('created_at').notNull().default(0),
  },
  (t) => [index('idx_two_fa_backup_codes_user_id').on(t.userId)],
);

export type TwoFaBackupCode = typeof twoFaBackupCodes.$inferSelect;
export type NewTwoFaBackupCode = typeof twoFaBackupCodes.$inferInsert;
