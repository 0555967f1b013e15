/**
 * The audit trail, root's to read (docs/adr/0045): `GET /api/audit/` pages it newest first with filters (actor,
 * kind, outcome, time), `GET /api/audit/export` streams every matching row as JSON lines, oldest first.
 */
import { Readable } from 'node:stream';
import {
  type AuditFilterQuery,
  auditFilterSchema,
  auditQuerySchema,
  toAuditView,
} from '@turnpike/core/contracts/audit';
import { Role } from '@turnpike/core/domain/closed-sets';
import { type AuditFilter, createAuditRepo } from '@turnpike/core/repos/audit.repo';
import type { FastifyInstance } from 'fastify';
import { ok } from '../../http/reply.ts';
import type { RouteContext } from '../../http/route-context.ts';
import { parseInput } from '../../http/validate.ts';

const filterOf = (query: AuditFilterQuery): AuditFilter => ({
  actorId: query.actor_id,
  actorType: query.actor_type,
  kind: query.kind,
  outcome: query.outcome,
  start: query.start_timestamp,
  end: query.end_timestamp,
});

export function registerAuditRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const root = { preHandler: ctx.auth.requireRole(Role.Root) };
  const repo = createAuditRepo(ctx.deps.db);

  app.get('/audit/', root, async (request) => {
    const query = parseInput(auditQuerySchema, request.query);
    const { rows, total } = await repo.page(filterOf(query), query.p, query.page_size);
    return ok({ items: rows.map(toAuditView), total, page: query.p, page_size: query.page_size });
  });

  app.get('/audit/export', root, async (request, reply) => {
    const filter = filterOf(parseInput(auditFilterSchema, request.query));
    const rows = repo.each(filter);
    async function* lines() {
      for await (const row of rows) yield `${JSON.stringify(toAuditView(row))}\n`;
    }
    const stamp = new Date().toISOString().slice(0, 10);
    return reply
      .header('content-type', 'application/x-ndjson; charset=utf-8')
      .header('content-disposition', `attachment; filename="audit-${stamp}.jsonl"`)
      .send(Readable.from(lines(), { objectMode: false }));
  });
}
