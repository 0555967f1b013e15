import { loginSchema, registerSchema, toSessionUser } from '@turnpike/core/contracts/users';
import { endSession } from '@turnpike/core/sessions/session-end';
import type { FastifyInstance } from 'fastify';
import { ok } from '../../http/reply.ts';
import type { RouteContext } from '../../http/route-context.ts';
import { clearSession, readSession, startSession } from '../../http/session.ts';
import { createTurnstileCheck } from '../../http/turnstile.ts';
import { parseInput } from '../../http/validate.ts';
import { createAuthService } from './auth.service.ts';

export function registerAuthRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const auth = createAuthService(ctx.deps);
  const critical = { onRequest: ctx.criticalLimit };
  const checked = { ...critical, preHandler: createTurnstileCheck(ctx.deps, ctx.sessions) };

  app.post('/user/login', checked, async (request, reply) => {
    const user = await auth.login(parseInput(loginSchema, request.body));
    startSession(request, reply, ctx.sessions, user);
    return ok(toSessionUser(user));
  });

  /** Ends this session on every process (a saved copy of the cookie stops working too), then clears it. */
  app.get('/user/logout', async (request, reply) => {
    await endSession(ctx.deps.db, readSession(request, ctx.sessions));
    clearSession(reply);
    return ok();
  });

  app.post('/user/register', checked, async (request) => {
    await auth.register(parseInput(registerSchema, request.body));
    return ok(undefined, 'registered; you can sign in now');
  });
}
