import { bigserial, boolean, index, integer, pgTable, text, varchar } from 'drizzle-orm/pg-core';
import { unixSeconds } from './columns.ts';

/**
 * The prompt and answer of a call, kept only while content logs are on for the caller's group or token
 * (docs/adr/0045), already redacted and cut to `ContentLogMaxBytes` when written; found from a consume log by
 * its request id. Kept `ContentLogRetentionDays`.
 */
export const contentLogs = pgTable(
  'content_logs',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    /** The relay's request id, as the consume log holds it. */
    requestId: varchar('request_id', { length: 64 }).notNull(),
    userId: integer('user_id').notNull(),
    tokenId: integer('token_id').notNull().default(0),
    createdAt: unixSeconds('created_at').notNull(),
    modelName: varchar('model_name', { length: 255 }).notNull().default(''),
    /** The request's body as the client sent it (JSON text), redacted. */
    prompt: text('prompt').notNull().default(''),
    /** The answer's text (a stream's pieces joined), redacted. */
    answer: text('answer').notNull().default(''),
    /** Part of the prompt or answer was cut at the size cap. */
    truncated: boolean('truncated').notNull().default(false),
    /** How many things the redaction rules replaced. */
    redactions: integer('redactions').notNull().default(0),
  },
  (t) => [
    index('idx_content_logs_request_id').on(t.requestId),
    index('idx_content_logs_created_at').on(t.createdAt),
  ],
);

export type ContentLog = typeof contentLogs.$inferSelect;
export type NewContentLog = typeof contentLogs.$inferInsert;
