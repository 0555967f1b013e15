import { adminBatchQuerySchema, selfBatchQuerySchema } from '@turnpike/core/contracts/batches';
import { Role } from '@turnpike/core/domain/users';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { currentUser } from '../../http/auth.ts';
import { ok } from '../../http/reply.ts';
import type { RouteContext } from '../../http/route-context.ts';
import { parseInput } from '../../http/validate.ts';
import { createBatchesService } from './batches.service.ts';

const sendFile = (reply: FastifyReply, file: { filename: string; content: Buffer }) =>
  reply
    .header('content-type', 'application/octet-stream')
    .header('content-disposition', `attachment; filename="${file.filename.replace(/["\\\r\n]/g, '_')}"`)
    .send(file.content);

export function registerBatchRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const batches = createBatchesService(ctx.deps);
  const admin = { preHandler: ctx.auth.requireRole(Role.Admin) };
  const signedIn = { preHandler: ctx.auth.requireRole(Role.User) };

  app.get('/batch/', admin, async (request) =>
    ok(await batches.listAll(parseInput(adminBatchQuerySchema, request.query))),
  );
  app.get('/batch/self', signedIn, async (request) =>
    ok(await batches.listOwn(currentUser(request), parseInput(selfBatchQuerySchema, request.query))),
  );
  app.get<{ Params: { id: string } }>('/batch/file/:id', admin, async (request, reply) =>
    sendFile(reply, await batches.downloadAny(request.params.id)),
  );
  app.get<{ Params: { id: string } }>('/batch/self/file/:id', signedIn, async (request, reply) =>
    sendFile(reply, await batches.downloadOwn(currentUser(request), request.params.id)),
  );
}
