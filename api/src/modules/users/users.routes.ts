import { pageQuerySchema } from '@turnpike/core/contracts/envelope';
import {
  createUserSchema,
  manageUserSchema,
  updateUserSchema,
  userSearchQuerySchema,
} from '@turnpike/core/contracts/users';
import { Role } from '@turnpike/core/domain/users';
import type { FastifyInstance } from 'fastify';
import { currentUser } from '../../http/auth.ts';
import { ok } from '../../http/reply.ts';
import type { RouteContext } from '../../http/route-context.ts';
import { renewSession } from '../../http/session.ts';
import { parseId, parseInput } from '../../http/validate.ts';
import { createUsersService } from './users.service.ts';

/**
 * Admin user management: list, search, get, create, update, manage, delete. The static paths (`/user/search`,
 * `/user/manage`, and the self routes `/user/self`, `/user/token`, ...) win over `/user/:id` in Fastify's router.
 */
export function registerUserRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const service = createUsersService(ctx.deps);
  const admin = { preHandler: ctx.auth.requireRole(Role.Admin) };

  app.get('/user/', admin, async (request) => {
    const { p, page_size } = parseInput(pageQuerySchema, request.query);
    return ok(await service.list({}, { page: p, pageSize: page_size }));
  });

  app.get('/user/search', admin, async (request) => {
    const { keyword, group, p, page_size } = parseInput(userSearchQuerySchema, request.query);
    return ok(await service.list({ keyword, group }, { page: p, pageSize: page_size }));
  });

  app.get('/user/:id', admin, async (request) =>
    ok(
      await service.view(
        await service.get(currentUser(request), parseId((request.params as { id: string }).id)),
      ),
    ),
  );

  app.post('/user/', admin, async (request) => {
    const created = await service.create(currentUser(request), parseInput(createUserSchema, request.body));
    return ok(created, 'user created');
  });

  app.put('/user/', admin, async (request, reply) => {
    const actor = currentUser(request);
    const updated = await service.update(actor, parseInput(updateUserSchema, request.body));
    // Root setting its own password keeps this session (its other sessions end).
    if (updated.id === actor.id && updated.sessionGeneration !== actor.sessionGeneration)
      renewSession(request, reply, ctx.sessions, updated);
    return ok(await service.view(updated), 'saved');
  });

  app.delete('/user/:id', admin, async (request) => {
    await service.manage(currentUser(request), parseId((request.params as { id: string }).id), 'delete');
    return ok(undefined, 'user deleted');
  });

  app.post('/user/manage', admin, async (request) => {
    const { id, action } = parseInput(manageUserSchema, request.body);
    return ok(await service.manage(currentUser(request), id, action));
  });
}
