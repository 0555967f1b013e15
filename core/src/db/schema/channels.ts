import { bigint, doublePrecision, index, integer, pgTable, serial, text, varchar } from 'drizzle-orm/pg-core';
import { quotaAmount, unixSeconds } from './columns.ts';

export const channels = pgTable(
  'channels',
  {
    id: serial('id').primaryKey(),
    type: integer('type').notNull().default(0),
    /** Encrypted at rest with CRYPTO_SECRET; never returned by any endpoint. */
    key: text('key').notNull(),
    openaiOrganization: text('openai_organization'),
    testModel: text('test_model'),
    /** 1 enabled, 2 disabled by hand, 3 disabled automatically. */
    status: integer('status').notNull().default(1),
    name: varchar('name', { length: 255 }).notNull().default(''),
    weight: integer('weight').notNull().default(0),
    createdTime: unixSeconds('created_time').notNull().default(0),
    testTime: unixSeconds('test_time').notNull().default(0),
    /** Milliseconds of the last test. */
    responseTime: integer('response_time').notNull().default(0),
    baseUrl: text('base_url').notNull().default(''),
    /** Per-type extra: Azure API version, Vertex region, Cloudflare account id, ... */
    other: text('other').notNull().default(''),
    balance: doublePrecision('balance').notNull().default(0),
    balanceUpdatedTime: unixSeconds('balance_updated_time').notNull().default(0),
    /** Comma-separated model names. */
    models: text('models').notNull().default(''),
    /** Comma-separated group names. */
    group: varchar('group', { length: 255 }).notNull().default('default'),
    usedQuota: quotaAmount('used_quota').notNull().default(0),
    modelMapping: text('model_mapping'),
    statusCodeMapping: varchar('status_code_mapping', { length: 1024 }),
    priority: bigint('priority', { mode: 'number' }).notNull().default(0),
    autoBan: integer('auto_ban').notNull().default(1),
    /** JSON: status_reason, status_time. */
    otherInfo: text('other_info'),
    tag: varchar('tag', { length: 255 }),
    /** JSON: force_format, proxy, thinking_to_content, headers, ... */
    setting: text('setting'),
    paramOverride: text('param_override'),
    /**
     * JSON, the reference's `channel_info` (docs/adr/0027): whether `key` holds several keys, how one is chosen,
     * and each key's state by position (`multi_key_status_list`, `_disabled_reason`, `_disabled_time`).
     */
    channelInfo: text('channel_info'),
    /** Largest prompt, in tokens, this channel accepts; 0 means no limit. */
    maxInputTokens: integer('max_input_tokens').notNull().default(0),
    /** Requests per minute, tokens per minute and requests in flight on this channel; 0 is no limit. */
    rpmLimit: integer('rpm_limit').notNull().default(0),
    tpmLimit: integer('tpm_limit').notNull().default(0),
    concurrencyLimit: integer('concurrency_limit').notNull().default(0),
    /**
     * Set when a Kubernetes resource owns this row (docs/adr/0017): its kind, namespace, name and the generation
     * last applied, plus which key of the resource's Secret the row holds. The console API refuses to change it.
     */
    sourceKind: varchar('source_kind', { length: 63 }),
    sourceNamespace: varchar('source_namespace', { length: 253 }),
    sourceName: varchar('source_name', { length: 253 }),
    sourceGeneration: bigint('source_generation', { mode: 'number' }),
    sourceIndex: integer('source_index'),
  },
  (t) => [
    index('idx_channels_name').on(t.name),
    index('idx_channels_status').on(t.status),
    index('idx_channels_tag').on(t.tag),
    index('idx_channels_source').on(t.sourceKind, t.sourceNamespace, t.sourceName),
  ],
);

export type Channel = typeof channels.$inferSelect;
export type NewChannel = typeof channels.$inferInsert;
