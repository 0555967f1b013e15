import { lt } from 'drizzle-orm';
import { contentLogs } from '../db/schema/content-logs.ts';
import { createAuditRepo } from '../repos/audit.repo.ts';
import { createStoredResponseRepo } from '../responses/stored-response.repo.ts';
import type { RuntimeDeps } from './runtime.ts';

const DAY_SECONDS = 24 * 3600;

/**
 * Deletes audit rows older than AuditRetentionDays (0 keeps them) and content logs older than
 * ContentLogRetentionDays (docs/adr/0045) and stored responses past their retention (docs/adr/0051), counted from
 * `now`; answers how many rows went. Run with the usage
 * logs' purge (log-retention.ts): on boot, then once a day, safe on every replica at once.
 */
export async function purgeGovernanceRows(
  deps: Pick<RuntimeDeps, 'db' | 'options'>,
  now: Date = new Date(),
): Promise<number> {
  const seconds = Math.floor(now.getTime() / 1000);
  let deleted = 0;
  const auditDays = deps.options.get('AuditRetentionDays');
  if (auditDays > 0)
    deleted += await createAuditRepo(deps.db).deleteBefore(seconds - auditDays * DAY_SECONDS);
  const contentDays = deps.options.get('ContentLogRetentionDays');
  const gone = await deps.db
    .delete(contentLogs)
    .where(lt(contentLogs.createdAt, seconds - contentDays * DAY_SECONDS))
    .returning({ id: contentLogs.id });
  const expired = await createStoredResponseRepo(deps.db).deleteExpired(seconds);
  return deleted + gone.length + expired;
}
