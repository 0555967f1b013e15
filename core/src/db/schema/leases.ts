import { bigint, pgTable, varchar } from 'drizzle-orm/pg-core';

/**
 * Named leases for background work that exactly one process may do at a time (the task poller), used when no
 * Redis is configured: a row is taken when absent, expired or already the holder's, in one statement.
 */
export const leases = pgTable('leases', {
  name: varchar('name', { length: 64 }).primaryKey(),
  holder: varchar('holder', { length: 64 }).notNull(),
  /** Unix milliseconds. */
  expiresAt: bigint('expires_at', { mode: 'number' }).notNull(),
});

export type Lease = typeof leases.$inferSelect;
