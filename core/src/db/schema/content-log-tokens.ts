import { integer, pgTable } from 'drizzle-orm/pg-core';
import { unixSeconds } from './columns.ts';

/**
 * Tokens whose calls keep content logs (docs/adr/0045), beside the groups of `ContentLogGroups`. A table of its own
 * rather than a token column: the relay holds the few ids in memory, and a token without a row costs nothing.
 */
export const contentLogTokens = pgTable('content_log_tokens', {
  tokenId: integer('token_id').primaryKey(),
  /** Who turned it on (the owner, or an administrator). */
  enabledBy: integer('enabled_by').notNull(),
  enabledAt: unixSeconds('enabled_at').notNull(),
});

export type ContentLogToken = typeof contentLogTokens.$inferSelect;
