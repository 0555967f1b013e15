import { z } from 'zod';
import type { AuditLog } from '../db/schema/audit-logs.ts';
import { AuditActorType, AuditKind, AuditOutcome } from '../domain/closed-sets.ts';
import { pageQuerySchema } from './envelope.ts';
import { queryInt } from './logs.ts';

const blankToUndefined = (value: unknown) => (value === '' || value === null ? undefined : value);

function oneOfQuery<T extends Record<string, string>>(name: string, set: T) {
  const values = Object.values(set) as [T[keyof T], ...T[keyof T][]];
  return z.preprocess(
    blankToUndefined,
    z.enum(values, { error: `${name} must be one of ${values.join(', ')}` }).optional(),
  );
}

/** The filters of `GET /api/audit/` and `GET /api/audit/export`. */
export const auditFilterSchema = z.object({
  /** The user who made the changes (their id); 0 is the operator. */
  actor_id: queryInt('actor_id', 'a user id'),
  actor_type: oneOfQuery('actor_type', AuditActorType),
  kind: oneOfQuery('kind', AuditKind),
  outcome: oneOfQuery('outcome', AuditOutcome),
  start_timestamp: queryInt('start_timestamp', 'a Unix time in seconds'),
  end_timestamp: queryInt('end_timestamp', 'a Unix time in seconds'),
});
export type AuditFilterQuery = z.infer<typeof auditFilterSchema>;

export const auditQuerySchema = auditFilterSchema.extend(pageQuerySchema.shape);

/** One audit row as the console and the export show it; before, after and request are parsed JSON (or null). */
export interface AuditView {
  id: number;
  created_at: number;
  actor_type: string;
  actor_id: number;
  actor_name: string;
  kind: string;
  action: string;
  target_ids: string[];
  outcome: string;
  message: string;
  source: string;
  ip: string;
  user_agent: string;
  request_id: string;
  before: unknown;
  after: unknown;
  request: unknown;
}

const parsed = (text: string): unknown => {
  if (text === '') return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
};

export function toAuditView(row: AuditLog): AuditView {
  return {
    id: row.id,
    created_at: row.createdAt,
    actor_type: row.actorType,
    actor_id: row.actorId,
    actor_name: row.actorName,
    kind: row.kind,
    action: row.action,
    target_ids: row.targetIds === '' ? [] : row.targetIds.split(','),
    outcome: row.outcome,
    message: row.message,
    source: row.source,
    ip: row.ip,
    user_agent: row.userAgent,
    request_id: row.requestId,
    before: parsed(row.before),
    after: parsed(row.after),
    request: parsed(row.request),
  };
}
