import { Role } from '@turnpike/core/domain/users';
import { defaultModelsByType } from '@turnpike/core/providers/catalogue';
import type { FastifyInstance } from 'fastify';
import { ok } from '../../http/reply.ts';
import type { RouteContext } from '../../http/route-context.ts';

/** `GET /api/models`: each provider type's default model list, for the channel form. */
export function registerModelRoutes(app: FastifyInstance, ctx: RouteContext): void {
  app.get('/models', { preHandler: ctx.auth.requireRole(Role.User) }, async () => ok(defaultModelsByType()));
}
