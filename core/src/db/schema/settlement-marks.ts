import { bigint, pgTable, varchar } from 'drizzle-orm/pg-core';

/**
 * How far each settlement journal has reached the database (docs/adr/0022): one row per journal (a relay
 * process's run), holding the highest sequence number written. It is advanced in the transaction that writes the
 * journal's entries, so an entry replayed after a crash (from Redis or a local spool) is skipped instead of being
 * written twice.
 */
export const settlementMarks = pgTable('settlement_marks', {
  journal: varchar('journal', { length: 64 }).primaryKey(),
  seq: bigint('seq', { mode: 'number' }).notNull(),
  /** Unix seconds of the last write, so marks of long-gone journals can be pruned. */
  updatedAt: bigint('updated_at', { mode: 'number' }).notNull(),
});

export type SettlementMark = typeof settlementMarks.$inferSelect;
