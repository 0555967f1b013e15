import { bigint, doublePrecision, index, pgTable, primaryKey, varchar } from 'drizzle-orm/pg-core';

/**
 * Which option values a Kubernetes resource owns (docs/adr/0017): a whole option (`entry` empty, from a
 * GatewayOption; its value is the `options` row) or one entry of a price map such as ModelRatio (from a
 * ModelPrice: `entry` is the model, or `group/model` in the group maps, and `value` is the number). Price entries
 * live here, one row each, and the option store lays them over the map's `options` row when it loads, so a
 * change to one ModelPrice writes only that resource's rows. The console API refuses to change an owned value;
 * the operator removes the value when the resource goes.
 */
export const optionSources = pgTable(
  'option_sources',
  {
    optionKey: varchar('option_key', { length: 255 }).notNull(),
    entry: varchar('entry', { length: 255 }).notNull().default(''),
    sourceKind: varchar('source_kind', { length: 63 }).notNull(),
    sourceNamespace: varchar('source_namespace', { length: 253 }).notNull(),
    sourceName: varchar('source_name', { length: 253 }).notNull(),
    sourceGeneration: bigint('source_generation', { mode: 'number' }).notNull(),
    /** A price entry's number; null for a whole option (its text is in `options`). */
    value: doublePrecision('value'),
  },
  (t) => [
    primaryKey({ columns: [t.optionKey, t.entry] }),
    index('idx_option_sources_source').on(t.sourceKind, t.sourceNamespace, t.sourceName),
  ],
);

export type OptionSource = typeof optionSources.$inferSelect;
export type NewOptionSource = typeof optionSources.$inferInsert;
