import { bigint, boolean, index, integer, pgTable, primaryKey, varchar } from 'drizzle-orm/pg-core';

/** Routing index: one row per group x model x channel, rebuilt whenever a channel changes. */
export const abilities = pgTable(
  'abilities',
  {
    group: varchar('group', { length: 64 }).notNull(),
    model: varchar('model', { length: 255 }).notNull(),
    channelId: integer('channel_id').notNull(),
    enabled: boolean('enabled').notNull().default(true),
    priority: bigint('priority', { mode: 'number' }).notNull().default(0),
    weight: integer('weight').notNull().default(0),
    tag: varchar('tag', { length: 255 }),
  },
  (t) => [
    primaryKey({ columns: [t.group, t.model, t.channelId] }),
    index('idx_abilities_channel_id').on(t.channelId),
    index('idx_abilities_priority').on(t.priority),
    index('idx_abilities_weight').on(t.weight),
    index('idx_abilities_tag').on(t.tag),
  ],
);

export type Ability = typeof abilities.$inferSelect;
export type NewAbility = typeof abilities.$inferInsert;
