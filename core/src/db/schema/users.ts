import { bigint, index, integer, jsonb, pgTable, serial, text, varchar } from 'drizzle-orm/pg-core';
import type { QuotaWindows } from '../../billing/quota-windows.ts';
import { deletedAt, quotaAmount, unixSeconds } from './columns.ts';

export const users = pgTable(
  'users',
  {
    id: serial('id').primaryKey(),
    username: varchar('username', { length: 64 }).notNull().unique(),
    /** scrypt hash; never leaves the server. */
    password: text('password').notNull(),
    displayName: varchar('display_name', { length: 64 }).notNull().default(''),
    role: integer('role').notNull().default(1),
    status: integer('status').notNull().default(1),
    email: varchar('email', { length: 255 }).notNull().default(''),
    githubId: varchar('github_id', { length: 255 }).notNull().default(''),
    oidcId: varchar('oidc_id', { length: 255 }).notNull().default(''),
    wechatId: varchar('wechat_id', { length: 255 }).notNull().default(''),
    telegramId: varchar('telegram_id', { length: 255 }).notNull().default(''),
    linuxDoId: varchar('linux_do_id', { length: 255 }).notNull().default(''),
    /** System access token for scripts (`Authorization: <token>` + `New-Api-User`). */
    accessToken: varchar('access_token', { length: 64 }).unique(),
    quota: quotaAmount('quota').notNull().default(0),
    usedQuota: quotaAmount('used_quota').notNull().default(0),
    requestCount: integer('request_count').notNull().default(0),
    /** Bumped by every batched debit of `quota`, so the shared ledger can order its base against those writes. */
    ledgerVersion: bigint('ledger_version', { mode: 'number' }).notNull().default(0),
    group: varchar('group', { length: 64 }).notNull().default('default'),
    /** Budgets that reset (docs/adr/0043), beside those of the user's group (`GroupQuotaWindows`). */
    quotaWindows: jsonb('quota_windows').$type<QuotaWindows>().notNull().default([]),
    affCode: varchar('aff_code', { length: 32 }).unique(),
    affCount: integer('aff_count').notNull().default(0),
    /** Invite earnings not yet moved into `quota`. */
    affQuota: quotaAmount('aff_quota').notNull().default(0),
    affHistoryQuota: quotaAmount('aff_history').notNull().default(0),
    inviterId: integer('inviter_id').notNull().default(0),
    /** JSON text: notify_type, quota_warning_threshold, webhook_url, webhook_secret, notification_email, ... */
    setting: text('setting').notNull().default(''),
    createdTime: unixSeconds('created_time').notNull().default(0),
    deletedAt: deletedAt(),
    /**
     * The session cookies of this user carry the generation they were issued under and are refused once it has
     * moved on. A database trigger (migration 0003) moves it whenever the password, role, status or deletion
     * changes, so every path that makes such a change ends the user's sessions (docs/adr/0020).
     */
    sessionGeneration: integer('session_generation').notNull().default(0),
    /**
     * Sessions of the current generation ended one by one (sign-out): `[session id, its expiry in Unix seconds]`,
     * kept until that expiry. Short: entries past their expiry are dropped on each sign-out, and the list is
     * emptied whenever the generation moves.
     */
    endedSessions: jsonb('ended_sessions').$type<EndedSession[]>().notNull().default([]),
  },
  (t) => [
    index('idx_users_display_name').on(t.displayName),
    index('idx_users_email').on(t.email),
    index('idx_users_inviter_id').on(t.inviterId),
    index('idx_users_deleted_at').on(t.deletedAt),
    index('idx_users_github_id').on(t.githubId),
    index('idx_users_oidc_id').on(t.oidcId),
    index('idx_users_wechat_id').on(t.wechatId),
    index('idx_users_telegram_id').on(t.telegramId),
    index('idx_users_linux_do_id').on(t.linuxDoId),
  ],
);

/** A session ended by sign-out: its id and the Unix second its cookie expires. */
export type EndedSession = [sessionId: string, expiresAt: number];

export type User = typeof users.$inferSelect;
export type NewUser = typeof users.$inferInsert;
