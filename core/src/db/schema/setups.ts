import { pgTable, serial, varchar } from 'drizzle-orm/pg-core';
import { unixSeconds } from './columns.ts';

/** One row once the first-run setup has completed. */
export const setups = pgTable('setups', {
  id: serial('id').primaryKey(),
  version: varchar('version', { length: 50 }).notNull().default(''),
  initializedAt: unixSeconds('initialized_at').notNull(),
});

export type Setup = typeof setups.$inferSelect;
