import { loginSchema, registerSchema, toSessionUser } from '@turnpike/core/contracts/users';
import type { FastifyInstance } from 'fastify';
import { ok } from '../../http/reply.ts';
import type { RouteContext } from '../../http/route-context.ts';
import { clearSession, readSession, writeSession } from '../../http/session.ts';
import { createTurnstileCheck } from '../../http/turnstile.ts';
import { parseInput } from '../../http/validate.ts';
import { createAuthService } from './auth.service.ts';

export function registerAuthRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const auth = createAuthService(ctx.deps);
  const critical = { onRequest: ctx.criticalLimit };
  const checked = { ...critical, preHandler: createTurnstileCheck(ctx.deps, ctx.sessions) };

  app.post('/user/login', checked, async (request, reply) => {
    const user = await auth.login(parseInput(loginSchema, request.body));
    writeSession(request, reply, ctx.sessions, {
      ...readSession(request, ctx.sessions),
      uid: user.id,
      iat: Math.floor(Date.now() / 1000),
    });
    return ok(toSessionUser(user));
  });

  app.get('/user/logout', async (_request, reply) => {
    clearSession(reply);
    return ok();
  });

  app.post('/user/register', checked, async (request) => {
    await auth.register(parseInput(registerSchema, request.body));
    return ok(undefined, 'registered; you can sign in now');
  });
}
