import { index, integer, jsonb, pgTable, varchar } from 'drizzle-orm/pg-core';
import { quotaAmount, unixSeconds } from './columns.ts';

/**
 * Fine-tuning jobs passed through to an OpenAI or Azure channel (`/v1/fine_tuning/jobs`, docs/adr/0050): the
 * gateway's id, the upstream's, who pays, and the money: `held` taken with the row, `charged` the trained tokens at
 * the provider's training price, the rest given back once (`settled_at`).
 */
export const fineTuningJobs = pgTable(
  'fine_tuning_jobs',
  {
    /** `ftjob-` and 24 hex digits. */
    id: varchar('id', { length: 64 }).primaryKey(),
    userId: integer('user_id').notNull(),
    tokenId: integer('token_id').notNull(),
    tokenLimited: integer('token_limited').notNull().default(0),
    channelId: integer('channel_id').notNull(),
    upstreamId: varchar('upstream_id', { length: 191 }).notNull().default(''),
    model: varchar('model', { length: 191 }).notNull(),
    trainingFile: varchar('training_file', { length: 64 }).notNull(),
    validationFile: varchar('validation_file', { length: 64 }),
    status: varchar('status', { length: 32 }).notNull(),
    /** The upstream's job object as last read (ids of the gateway put back in). */
    job: jsonb('job'),
    /** USD per million training tokens, times the group ratio, fixed when the job was accepted. */
    usdPerMillion: jsonb('usd_per_million').notNull(),
    held: quotaAmount('held').notNull(),
    charged: quotaAmount('charged').notNull().default(0),
    username: varchar('username', { length: 64 }).notNull().default(''),
    tokenName: varchar('token_name', { length: 64 }).notNull().default(''),
    group: varchar('group', { length: 64 }).notNull().default(''),
    createdAt: unixSeconds('created_at').notNull(),
    settledAt: unixSeconds('settled_at').notNull().default(0),
  },
  (t) => [index('idx_fine_tuning_jobs_user_id').on(t.userId, t.createdAt)],
);

export type FineTuningJob = typeof fineTuningJobs.$inferSelect;
