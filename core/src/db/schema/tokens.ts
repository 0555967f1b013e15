import { bigint, boolean, index, integer, jsonb, pgTable, serial, text, varchar } from 'drizzle-orm/pg-core';
import type { QuotaWindows } from '../../billing/quota-windows.ts';
import { deletedAt, quotaAmount, unixSeconds } from './columns.ts';

export const tokens = pgTable(
  'tokens',
  {
    id: serial('id').primaryKey(),
    userId: integer('user_id').notNull(),
    /** 48 characters [0-9A-Za-z], stored without the `sk-` prefix. */
    key: varchar('key', { length: 48 }).notNull().unique(),
    status: integer('status').notNull().default(1),
    name: varchar('name', { length: 64 }).notNull().default(''),
    createdTime: unixSeconds('created_time').notNull().default(0),
    accessedTime: unixSeconds('accessed_time').notNull().default(0),
    /** -1 never expires. */
    expiredTime: unixSeconds('expired_time').notNull().default(-1),
    remainQuota: quotaAmount('remain_quota').notNull().default(0),
    /** Bumped by every batched debit of `remain_quota` (see users.ledger_version). */
    ledgerVersion: bigint('ledger_version', { mode: 'number' }).notNull().default(0),
    unlimitedQuota: boolean('unlimited_quota').notNull().default(false),
    modelLimitsEnabled: boolean('model_limits_enabled').notNull().default(false),
    /** Comma-separated model names. */
    modelLimits: text('model_limits').notNull().default(''),
    /** Newline-separated IPs or CIDR ranges. */
    allowIps: text('allow_ips').notNull().default(''),
    usedQuota: quotaAmount('used_quota').notNull().default(0),
    /** Empty means the owner's group. */
    group: varchar('group', { length: 64 }).notNull().default(''),
    /** Requests per minute, tokens per minute and requests in flight with this token; 0 is no limit. */
    rpmLimit: integer('rpm_limit').notNull().default(0),
    tpmLimit: integer('tpm_limit').notNull().default(0),
    concurrencyLimit: integer('concurrency_limit').notNull().default(0),
    /** Budgets that reset (docs/adr/0043): what this token may spend per day, week, month or rolling hours. */
    quotaWindows: jsonb('quota_windows').$type<QuotaWindows>().notNull().default([]),
    deletedAt: deletedAt(),
  },
  (t) => [
    index('idx_tokens_user_id').on(t.userId),
    index('idx_tokens_name').on(t.name),
    index('idx_tokens_deleted_at').on(t.deletedAt),
  ],
);

export type Token = typeof tokens.$inferSelect;
export type NewToken = typeof tokens.$inferInsert;
