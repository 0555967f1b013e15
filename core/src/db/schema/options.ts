import { pgTable, text, varchar } from 'drizzle-orm/pg-core';

/** Runtime settings as key/value text; the registry in `core/src/options` owns types and defaults. */
export const options = pgTable('options', {
  key: varchar('key', { length: 255 }).primaryKey(),
  value: text('value').notNull().default(''),
});

export type OptionRow = typeof options.$inferSelect;
