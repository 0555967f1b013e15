import { bigint, index, integer, pgTable, serial, text, varchar } from 'drizzle-orm/pg-core';
import { quotaAmount } from './columns.ts';

const millis = (name: string) => bigint(name, { mode: 'number' });

/** Drawing tasks; times are Unix milliseconds. */
export const midjourneys = pgTable(
  'midjourneys',
  {
    id: serial('id').primaryKey(),
    code: integer('code').notNull().default(0),
    userId: integer('user_id').notNull().default(0),
    /** The token that paid for the task: a refund goes back to it when its quota is limited. */
    tokenId: integer('token_id').notNull().default(0),
    action: varchar('action', { length: 40 }).notNull().default(''),
    mjId: varchar('mj_id', { length: 191 }).notNull().default(''),
    prompt: text('prompt').notNull().default(''),
    promptEn: text('prompt_en').notNull().default(''),
    description: text('description').notNull().default(''),
    state: text('state').notNull().default(''),
    submitTime: millis('submit_time').notNull().default(0),
    startTime: millis('start_time').notNull().default(0),
    finishTime: millis('finish_time').notNull().default(0),
    imageUrl: text('image_url').notNull().default(''),
    status: varchar('status', { length: 20 }).notNull().default(''),
    progress: varchar('progress', { length: 30 }).notNull().default(''),
    failReason: text('fail_reason').notNull().default(''),
    channelId: integer('channel_id').notNull().default(0),
    quota: quotaAmount('quota').notNull().default(0),
    buttons: text('buttons').notNull().default(''),
    properties: text('properties').notNull().default(''),
  },
  (t) => [
    index('idx_midjourneys_user_id').on(t.userId),
    index('idx_midjourneys_action').on(t.action),
    index('idx_midjourneys_mj_id').on(t.mjId),
    index('idx_midjourneys_submit_time').on(t.submitTime),
    index('idx_midjourneys_status').on(t.status),
    index('idx_midjourneys_progress').on(t.progress),
    index('idx_midjourneys_channel_id').on(t.channelId),
  ],
);

export type Midjourney = typeof midjourneys.$inferSelect;
export type NewMidjourney = typeof midjourneys.$inferInsert;
