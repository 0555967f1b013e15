import { adminDataQuerySchema, selfDataQuerySchema } from '@turnpike/core/contracts/data';
import { Role } from '@turnpike/core/domain/users';
import type { FastifyInstance } from 'fastify';
import { currentUser } from '../../http/auth.ts';
import { ok } from '../../http/reply.ts';
import type { RouteContext } from '../../http/route-context.ts';
import { parseInput } from '../../http/validate.ts';
import { createDataService } from './data.service.ts';

/** The data dashboard (`quota_data`): admin over everyone, a user over their own usage. */
export function registerDataRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const data = createDataService(ctx.deps);
  const admin = { preHandler: ctx.auth.requireRole(Role.Admin) };
  const signedIn = { preHandler: ctx.auth.requireRole(Role.User) };

  app.get('/data/', admin, async (request) =>
    ok(await data.listAll(parseInput(adminDataQuerySchema, request.query))),
  );
  app.get('/data/self', signedIn, async (request) =>
    ok(await data.listOwn(currentUser(request), parseInput(selfDataQuerySchema, request.query))),
  );
}
