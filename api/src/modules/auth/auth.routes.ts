import { loginSchema, registerSchema } from '@turnpike/core/contracts/users';
import { endSession } from '@turnpike/core/sessions/session-end';
import type { FastifyInstance } from 'fastify';
import { ok } from '../../http/reply.ts';
import type { RouteContext } from '../../http/route-context.ts';
import { clearSession, readSession } from '../../http/session.ts';
import { createTurnstileCheck } from '../../http/turnstile.ts';
import { parseInput } from '../../http/validate.ts';
import { createSecondStepGate, SECOND_STEP_MESSAGE } from '../two-factor/second-step.ts';
import { createAuthService } from './auth.service.ts';

export function registerAuthRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const auth = createAuthService(ctx.deps);
  const secondStep = createSecondStepGate(ctx.deps, ctx.sessions);
  const critical = { onRequest: ctx.criticalLimit };
  const checked = { ...critical, preHandler: createTurnstileCheck(ctx.deps, ctx.sessions) };

  /**
   * A right password signs in, unless the user has a second factor (a TOTP app or a passkey): then no session yet,
   * but new-api's answer that a second step is needed (`require_2fa`), which `/user/login/2fa` or a passkey
   * completes (docs/adr/0044).
   */
  app.post('/user/login', checked, async (request, reply) => {
    const user = await auth.login(parseInput(loginSchema, request.body));
    const next = await secondStep.proceed(request, reply, user);
    return 'pending' in next ? ok(next.pending, SECOND_STEP_MESSAGE) : ok(next.signedIn);
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
