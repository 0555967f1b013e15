import { AuditKind, AuditOutcome } from '@turnpike/core/domain/closed-sets';
import { choiceParam, listSearch, textParam } from '../../components/data-table/index.ts';

const kinds = ['', ...Object.values(AuditKind)] as [string, ...string[]];
const outcomes = ['', ...Object.values(AuditOutcome)] as [string, ...string[]];

/** The audit list's URL: who (a user id; 0 is the operator), what kind, how it ended, from and to (dates). */
export const auditSearch = listSearch({
  actor: textParam,
  kind: choiceParam(kinds, ''),
  outcome: choiceParam(outcomes, ''),
  from: textParam,
  to: textParam,
});

export const AUDIT_KINDS = kinds.slice(1);
export const AUDIT_OUTCOMES = outcomes.slice(1);

/** A `YYYY-MM-DD` date as Unix seconds at the start (or the end) of that day in the browser's zone. */
export function dayToSeconds(day: string, end = false): number | undefined {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day)) return undefined;
  const at = new Date(`${day}T${end ? '23:59:59' : '00:00:00'}`).getTime();
  return Number.isNaN(at) ? undefined : Math.floor(at / 1000);
}
