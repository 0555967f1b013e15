import { type SQL, sql } from 'drizzle-orm';
import {
  type AnyPgColumn,
  bigserial,
  boolean,
  index,
  integer,
  pgTable,
  text,
  varchar,
} from 'drizzle-orm/pg-core';
import { quotaAmount, unixSeconds } from './columns.ts';

/**
 * The text the keyword search looks in: content, model, token name and username joined by a character a keyword
 * never holds (chr(1)), so a match inside the joined text is a match inside one of them. The trigram index below is
 * built on this very expression, which is how the planner knows it may use it (docs/adr/0031).
 */
export const logSearchText = (t: {
  content: AnyPgColumn;
  modelName: AnyPgColumn;
  tokenName: AnyPgColumn;
  username: AnyPgColumn;
}): SQL =>
  sql`(${t.content} || chr(1) || ${t.modelName} || chr(1) || ${t.tokenName} || chr(1) || ${t.username})`;

/** Usage, top-up, management and system records. Type: 1 top-up, 2 consume, 3 manage, 4 system, 5 error. */
export const logs = pgTable(
  'logs',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    userId: integer('user_id').notNull().default(0),
    createdAt: unixSeconds('created_at').notNull(),
    type: integer('type').notNull().default(0),
    content: text('content').notNull().default(''),
    username: varchar('username', { length: 64 }).notNull().default(''),
    tokenName: varchar('token_name', { length: 64 }).notNull().default(''),
    modelName: varchar('model_name', { length: 255 }).notNull().default(''),
    quota: quotaAmount('quota').notNull().default(0),
    promptTokens: integer('prompt_tokens').notNull().default(0),
    completionTokens: integer('completion_tokens').notNull().default(0),
    /** Seconds. */
    useTime: integer('use_time').notNull().default(0),
    isStream: boolean('is_stream').notNull().default(false),
    channelId: integer('channel_id').notNull().default(0),
    tokenId: integer('token_id').notNull().default(0),
    group: varchar('group', { length: 64 }).notNull().default(''),
    ip: varchar('ip', { length: 64 }).notNull().default(''),
    /**
     * The relay's request id, shown in a log's details. Not indexed: nothing looks a log up by it (a replayed flush
     * is kept from billing twice by the journals' marks, ADR 0022).
     */
    requestId: varchar('request_id', { length: 64 }),
    /** JSON text: ratios, frt, cache tokens, admin_info, ... */
    other: text('other').notNull().default(''),
  },
  (t) => [
    // Each filter's column first, then created_at: the list is newest first (created_at desc, id desc) and a
    // filtered page reads its rows straight off the index in that order (docs/adr/0031).
    index('idx_logs_created_at_type').on(t.createdAt, t.type),
    // The filter by a type other than consume (errors, top-ups, system and manage logs: a small part of the table).
    // Consume logs, nearly every row, stay out of it: the consume filter reads (created_at, type), nearly all of whose
    // entries it keeps (migration 0014; docs/adr/0031, "what a log costs to write").
    index('idx_logs_other_types_created_at').on(t.type, t.createdAt).where(sql`${t.type} <> 2`),
    index('idx_logs_user_id_created_at').on(t.userId, t.createdAt),
    index('idx_logs_username_created_at').on(t.username, t.createdAt),
    // The model filter is a LIKE (`gpt-4%` as well as a plain name): under a collation other than C a btree bounds a
    // prefix pattern only with pattern operators (bench/README.md "The console at scale").
    index('idx_logs_model_name_pattern_created_at').on(t.modelName.op('varchar_pattern_ops'), t.createdAt),
    index('idx_logs_token_id_created_at').on(t.tokenId, t.createdAt),
    index('idx_logs_token_name_created_at').on(t.tokenName, t.createdAt),
    index('idx_logs_channel_id_created_at').on(t.channelId, t.createdAt),
    index('idx_logs_group_created_at').on(t.group, t.createdAt),
    // The keyword search (`ILIKE '%…%'`) by trigrams (pg_trgm, loaded by the embedded database too).
    index('idx_logs_search_trgm').using('gin', sql`${logSearchText(t)} gin_trgm_ops`),
  ],
);

export type Log = typeof logs.$inferSelect;
export type NewLog = typeof logs.$inferInsert;
