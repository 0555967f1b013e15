import { index, integer, jsonb, pgTable, primaryKey, varchar } from 'drizzle-orm/pg-core';
import { quotaAmount, unixSeconds } from './columns.ts';

/**
 * Batches (`/v1/batches`, docs/adr/0050): one row per batch a user created. `held` is the estimate taken from the
 * balance when the batch was accepted; `settled_at` is set, once, by the transaction that writes the lines' consume
 * logs and gives back `held − charged` (relay/src/batches/books.ts).
 */
export const batches = pgTable(
  'batches',
  {
    /** `batch_` and 32 hex digits. */
    id: varchar('id', { length: 64 }).primaryKey(),
    userId: integer('user_id').notNull(),
    tokenId: integer('token_id').notNull(),
    /** Whether the paying token's own quota is limited (the refund goes back to it then). */
    tokenLimited: integer('token_limited').notNull().default(0),
    channelId: integer('channel_id').notNull(),
    /** How the batch runs: `openai` (OpenAI's or Azure's Batch API), `anthropic` (Message Batches), `gateway`. */
    mode: varchar('mode', { length: 16 }).notNull(),
    model: varchar('model', { length: 191 }).notNull(),
    endpoint: varchar('endpoint', { length: 64 }).notNull(),
    /** OpenAI's batch status: validating, in_progress, finalizing, completed, failed, expired, cancelling, cancelled. */
    status: varchar('status', { length: 16 }).notNull(),
    inputFileId: varchar('input_file_id', { length: 64 }).notNull(),
    outputFileId: varchar('output_file_id', { length: 64 }),
    errorFileId: varchar('error_file_id', { length: 64 }),
    completionWindow: varchar('completion_window', { length: 16 }).notNull().default('24h'),
    /** The upstream's batch id (and its input file id), for the provider modes. */
    upstreamId: varchar('upstream_id', { length: 191 }).notNull().default(''),
    upstreamFileId: varchar('upstream_file_id', { length: 191 }).notNull().default(''),
    total: integer('total').notNull(),
    completed: integer('completed').notNull().default(0),
    failed: integer('failed').notNull().default(0),
    held: quotaAmount('held').notNull(),
    charged: quotaAmount('charged').notNull().default(0),
    /** The price the lines are billed at, fixed when the batch was accepted (model, group, batch multiplier). */
    pricing: jsonb('pricing').notNull(),
    username: varchar('username', { length: 64 }).notNull().default(''),
    tokenName: varchar('token_name', { length: 64 }).notNull().default(''),
    group: varchar('group', { length: 64 }).notNull().default(''),
    metadata: jsonb('metadata'),
    errors: jsonb('errors'),
    createdAt: unixSeconds('created_at').notNull(),
    inProgressAt: unixSeconds('in_progress_at'),
    finalizingAt: unixSeconds('finalizing_at'),
    completedAt: unixSeconds('completed_at'),
    failedAt: unixSeconds('failed_at'),
    expiredAt: unixSeconds('expired_at'),
    cancellingAt: unixSeconds('cancelling_at'),
    cancelledAt: unixSeconds('cancelled_at'),
    expiresAt: unixSeconds('expires_at').notNull(),
    /** 0 until the lines were billed and the rest of the hold given back. */
    settledAt: unixSeconds('settled_at').notNull().default(0),
  },
  (t) => [
    index('idx_batches_user_id').on(t.userId, t.createdAt),
    index('idx_batches_settled_at').on(t.settledAt),
  ],
);

export type Batch = typeof batches.$inferSelect;
export type NewBatch = typeof batches.$inferInsert;

/**
 * The lines of a batch the gateway runs itself (`mode` = `gateway`), one row per line answered: its output line as
 * OpenAI's output file has it, and its bill. The primary key keeps a line answered twice (two relays) to one row.
 */
export const batchResults = pgTable(
  'batch_results',
  {
    batchId: varchar('batch_id', { length: 64 }).notNull(),
    /** 0-based position of the line in the input file. */
    line: integer('line').notNull(),
    customId: varchar('custom_id', { length: 191 }).notNull(),
    /** Whether the line was served (its output goes to the output file, else to the error file). */
    served: integer('served').notNull(),
    output: jsonb('output').notNull(),
    quota: quotaAmount('quota').notNull().default(0),
    promptTokens: integer('prompt_tokens').notNull().default(0),
    completionTokens: integer('completion_tokens').notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.batchId, t.line] })],
);

export type BatchResult = typeof batchResults.$inferSelect;
