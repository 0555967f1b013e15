import type { AuditView } from '@turnpike/core/contracts/audit';
import type { Page } from '@turnpike/core/contracts/envelope';
import { api } from '../../../lib/api.ts';
import { getSessionUser } from '../../../lib/session.ts';
import { dayToSeconds } from '../search.ts';

export type AuditRow = AuditView;

export interface AuditFilters {
  actor: string;
  kind: string;
  outcome: string;
  from: string;
  to: string;
}

/** The query both the list and the export send. */
export function auditQuery(filters: AuditFilters): Record<string, string | number | undefined> {
  const actor = filters.actor.trim();
  return {
    actor_id: /^\d+$/.test(actor) ? Number(actor) : undefined,
    kind: filters.kind || undefined,
    outcome: filters.outcome || undefined,
    start_timestamp: dayToSeconds(filters.from),
    end_timestamp: dayToSeconds(filters.to, true),
  };
}

export const auditQueryKey = (filters: AuditFilters & { page: number; pageSize: number }) =>
  ['audit', filters] as const;

export const fetchAudit = (filters: AuditFilters & { page: number; pageSize: number }) =>
  api.get<Page<AuditRow>>('/api/audit/', {
    query: { ...auditQuery(filters), p: filters.page, page_size: filters.pageSize },
  });

/** The export's address with the filters. */
export function auditExportUrl(filters: AuditFilters): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(auditQuery(filters)))
    if (value !== undefined) params.set(key, String(value));
  const qs = params.toString();
  return qs ? `/api/audit/export?${qs}` : '/api/audit/export';
}

/**
 * Downloads the export as a `.jsonl` file. Fetched (the API wants the New-Api-User header a plain link cannot
 * send), then offered through an object URL.
 */
export async function downloadAuditExport(filters: AuditFilters): Promise<void> {
  const user = getSessionUser();
  const response = await fetch(auditExportUrl(filters), {
    credentials: 'same-origin',
    headers: user ? { 'New-Api-User': String(user.id) } : {},
  });
  if (!response.ok) throw new Error(`export failed (${response.status})`);
  const url = URL.createObjectURL(await response.blob());
  const link = document.createElement('a');
  link.href = url;
  link.download = `audit-${new Date().toISOString().slice(0, 10)}.jsonl`;
  link.style.display = 'none';
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 0);
}
