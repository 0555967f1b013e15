import {
  adminDrawingQuerySchema,
  adminTaskQuerySchema,
  selfDrawingQuerySchema,
  selfTaskQuerySchema,
} from '@turnpike/core/contracts/tasks';
import { Role } from '@turnpike/core/domain/users';
import type { FastifyInstance } from 'fastify';
import { currentUser } from '../../http/auth.ts';
import { ok } from '../../http/reply.ts';
import type { RouteContext } from '../../http/route-context.ts';
import { parseInput } from '../../http/validate.ts';
import { createTasksService } from './tasks.service.ts';

export function registerTaskRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const tasks = createTasksService(ctx.deps);
  const admin = { preHandler: ctx.auth.requireRole(Role.Admin) };
  const signedIn = { preHandler: ctx.auth.requireRole(Role.User) };

  app.get('/mj/', admin, async (request) =>
    ok(await tasks.listAllDrawings(parseInput(adminDrawingQuerySchema, request.query))),
  );
  app.get('/mj/self', signedIn, async (request) =>
    ok(await tasks.listOwnDrawings(currentUser(request), parseInput(selfDrawingQuerySchema, request.query))),
  );
  app.get('/task/', admin, async (request) =>
    ok(await tasks.listAllTasks(parseInput(adminTaskQuerySchema, request.query))),
  );
  app.get('/task/self', signedIn, async (request) =>
    ok(await tasks.listOwnTasks(currentUser(request), parseInput(selfTaskQuerySchema, request.query))),
  );
}
