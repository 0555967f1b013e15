import { bigint, boolean, index, integer, jsonb, pgTable, varchar } from 'drizzle-orm/pg-core';
import { unixSeconds } from './columns.ts';

/**
 * A response the gateway answered on `/v1/responses` with `store` not false (docs/adr/0051): its input items and
 * the response object as the client got it (output and usage in OpenAI's shapes), so it can be read back, listed,
 * deleted, and continued by `previous_response_id` on any channel. Readable only by the user who made it; gone
 * after `expires_at` (`ResponsesRetentionDays`, 30 by default, as OpenAI keeps them).
 */
export const storedResponses = pgTable(
  'stored_responses',
  {
    /** The response's id as the client got it: the upstream's (an OpenAI channel) or the relay's own. */
    id: varchar('id', { length: 128 }).primaryKey(),
    userId: integer('user_id').notNull(),
    tokenId: integer('token_id').notNull().default(0),
    /** The channel that answered. */
    channelId: integer('channel_id').notNull().default(0),
    /** Whether that channel's upstream holds the id too (an OpenAI channel answered and stored it). */
    isUpstreamHeld: boolean('is_upstream_held').notNull().default(false),
    model: varchar('model', { length: 255 }).notNull().default(''),
    /** The response this one continued, when it did: the chain is walked through it. */
    previousResponseId: varchar('previous_response_id', { length: 128 }),
    /** The request's own input items (ids added), in OpenAI's item shapes. */
    input: jsonb('input').$type<Record<string, unknown>[]>().notNull().default([]),
    /** The response object as the client got it: output items, usage, status. */
    response: jsonb('response').$type<Record<string, unknown>>().notNull(),
    createdAt: unixSeconds('created_at').notNull(),
    expiresAt: bigint('expires_at', { mode: 'number' }).notNull(),
  },
  (t) => [index('idx_stored_responses_expires_at').on(t.expiresAt)],
);

export type StoredResponse = typeof storedResponses.$inferSelect;
export type NewStoredResponse = typeof storedResponses.$inferInsert;
