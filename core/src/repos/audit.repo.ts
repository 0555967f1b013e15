import { and, desc, eq, gte, inArray, lt, lte, type SQL, sql } from 'drizzle-orm';
import type { Executor } from '../db/client.ts';
import { type AuditLog, auditLogs, type NewAuditLog } from '../db/schema/index.ts';

/** Filters of the audit list and export; absent fields do not filter. */
export interface AuditFilter {
  readonly actorId?: number | undefined;
  readonly actorType?: string | undefined;
  readonly kind?: string | undefined;
  readonly outcome?: string | undefined;
  /** Unix seconds, inclusive. */
  readonly start?: number | undefined;
  /** Unix seconds, inclusive. */
  readonly end?: number | undefined;
}

function conditionsOf(filter: AuditFilter): SQL[] {
  const where: SQL[] = [];
  if (filter.actorId !== undefined) where.push(eq(auditLogs.actorId, filter.actorId));
  if (filter.actorType) where.push(eq(auditLogs.actorType, filter.actorType));
  if (filter.kind) where.push(eq(auditLogs.kind, filter.kind));
  if (filter.outcome) where.push(eq(auditLogs.outcome, filter.outcome));
  if (filter.start !== undefined) where.push(gte(auditLogs.createdAt, filter.start));
  if (filter.end !== undefined) where.push(lte(auditLogs.createdAt, filter.end));
  return where;
}

const DELETE_BATCH = 5_000;

/** The audit trail of administrative changes (docs/adr/0045). */
export function createAuditRepo(db: Executor) {
  return {
    async insert(row: NewAuditLog): Promise<void> {
      await db.insert(auditLogs).values(row);
    },

    /** Newest first. */
    async page(
      filter: AuditFilter,
      page: number,
      pageSize: number,
    ): Promise<{ rows: AuditLog[]; total: number }> {
      const where = and(...conditionsOf(filter));
      const rows = await db
        .select()
        .from(auditLogs)
        .where(where)
        .orderBy(desc(auditLogs.id))
        .limit(pageSize)
        .offset((page - 1) * pageSize);
      const [counted] = await db
        .select({ total: sql<number>`count(*)`.mapWith(Number) })
        .from(auditLogs)
        .where(where);
      return { rows, total: counted?.total ?? 0 };
    },

    /** Every matching row, oldest first, a batch at a time (keyset on the id): for the JSON lines export. */
    async *each(filter: AuditFilter, batch = 500): AsyncGenerator<AuditLog> {
      let after = 0;
      for (;;) {
        const rows = await db
          .select()
          .from(auditLogs)
          .where(and(...conditionsOf(filter), sql`${auditLogs.id} > ${after}`))
          .orderBy(auditLogs.id)
          .limit(batch);
        yield* rows;
        if (rows.length < batch) return;
        after = rows[rows.length - 1]?.id ?? after;
      }
    },

    /** Deletes rows created before `cutoff` (unix seconds), in batches; answers how many went. */
    async deleteBefore(cutoff: number): Promise<number> {
      let deleted = 0;
      for (;;) {
        const batch = db
          .select({ id: auditLogs.id })
          .from(auditLogs)
          .where(lt(auditLogs.createdAt, cutoff))
          .limit(DELETE_BATCH);
        const gone = await db
          .delete(auditLogs)
          .where(inArray(auditLogs.id, batch))
          .returning({ id: auditLogs.id });
        deleted += gone.length;
        if (gone.length < DELETE_BATCH) return deleted;
      }
    },
  };
}

export type AuditRepo = ReturnType<typeof createAuditRepo>;
