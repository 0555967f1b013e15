import { bigserial, index, integer, pgTable, text, varchar } from 'drizzle-orm/pg-core';
import { unixSeconds } from './columns.ts';

/**
 * One row per administrative change (docs/adr/0045): who made it (a console user, a user's access token, or the
 * operator for a Kubernetes resource), what it changed (a kind and the ids), the state before and after with
 * secrets masked, from where and when. Written in the transaction of the change itself, so a change never exists
 * without its row; a refused change leaves a row of its own (outcome `refused`). Kept `AuditRetentionDays`.
 */
export const auditLogs = pgTable(
  'audit_logs',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    createdAt: unixSeconds('created_at').notNull(),
    /** `AuditActorType`: user, token, operator. */
    actorType: varchar('actor_type', { length: 16 }).notNull(),
    /** The user's id; 0 for the operator. */
    actorId: integer('actor_id').notNull().default(0),
    actorName: varchar('actor_name', { length: 128 }).notNull().default(''),
    /** `AuditKind`: channel, option, user, redemption, log, ... */
    kind: varchar('kind', { length: 32 }).notNull(),
    action: varchar('action', { length: 64 }).notNull(),
    /** The ids of what changed, comma-separated (a channel id, an option key, a user id). */
    targetIds: text('target_ids').notNull().default(''),
    /** `AuditOutcome`: ok, refused. */
    outcome: varchar('outcome', { length: 16 }).notNull(),
    /** Why a change was refused. */
    message: text('message').notNull().default(''),
    /** The route, `PUT /api/channel/`, or the resource, `Channel default/openai`. */
    source: varchar('source', { length: 255 }).notNull().default(''),
    ip: varchar('ip', { length: 64 }).notNull().default(''),
    userAgent: varchar('user_agent', { length: 255 }).notNull().default(''),
    requestId: varchar('request_id', { length: 64 }).notNull().default(''),
    /** JSON: the changed fields before the change, secrets masked. */
    before: text('before').notNull().default(''),
    /** JSON: the changed fields after the change, secrets masked. */
    after: text('after').notNull().default(''),
    /** JSON: what was asked (the request's body), secrets masked, cut at a few kilobytes. */
    request: text('request').notNull().default(''),
  },
  (t) => [
    index('idx_audit_logs_created_at').on(t.createdAt),
    index('idx_audit_logs_actor_created_at').on(t.actorId, t.createdAt),
    index('idx_audit_logs_kind_created_at').on(t.kind, t.createdAt),
  ],
);

export type AuditLog = typeof auditLogs.$inferSelect;
export type NewAuditLog = typeof auditLogs.$inferInsert;
