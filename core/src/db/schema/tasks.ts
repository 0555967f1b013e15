import { bigserial, index, integer, jsonb, pgTable, text, varchar } from 'drizzle-orm/pg-core';
import { quotaAmount, unixSeconds } from './columns.ts';

/** Creative (music, lyrics, video) tasks; times are Unix seconds. */
export const tasks = pgTable(
  'tasks',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    createdAt: unixSeconds('created_at').notNull().default(0),
    updatedAt: unixSeconds('updated_at').notNull().default(0),
    taskId: varchar('task_id', { length: 191 }).notNull().default(''),
    platform: varchar('platform', { length: 30 }).notNull().default(''),
    userId: integer('user_id').notNull().default(0),
    /** The token that paid for the task: a refund goes back to it when its quota is limited. */
    tokenId: integer('token_id').notNull().default(0),
    channelId: integer('channel_id').notNull().default(0),
    quota: quotaAmount('quota').notNull().default(0),
    action: varchar('action', { length: 40 }).notNull().default(''),
    status: varchar('status', { length: 20 }).notNull().default(''),
    failReason: text('fail_reason').notNull().default(''),
    submitTime: unixSeconds('submit_time').notNull().default(0),
    startTime: unixSeconds('start_time').notNull().default(0),
    finishTime: unixSeconds('finish_time').notNull().default(0),
    progress: varchar('progress', { length: 20 }).notNull().default(''),
    properties: jsonb('properties'),
    data: jsonb('data'),
  },
  (t) => [
    index('idx_tasks_created_at').on(t.createdAt),
    index('idx_tasks_task_id').on(t.taskId),
    index('idx_tasks_user_id').on(t.userId),
    index('idx_tasks_channel_id').on(t.channelId),
    index('idx_tasks_status').on(t.status),
    index('idx_tasks_submit_time').on(t.submitTime),
    index('idx_tasks_progress').on(t.progress),
  ],
);

export type Task = typeof tasks.$inferSelect;
export type NewTask = typeof tasks.$inferInsert;
