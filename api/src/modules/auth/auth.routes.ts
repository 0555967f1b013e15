import type { SecondStepRequired } from '@turnpike/core/contracts/two-factor';
import { loginSchema, registerSchema } from '@turnpike/core/contracts/users';
import { endSession } from '@turnpike/core/sessions/session-end';
import type { FastifyInstance } from 'fastify';
import { ok } from '../../http/reply.ts';
import type { RouteContext } from '../../http/route-context.ts';
import { clearSession, readSession, startSession } from '../../http/session.ts';
import { createTurnstileCheck } from '../../http/turnstile.ts';
import { parseInput } from '../../http/validate.ts';
import { createPasskeyService } from '../passkeys/passkeys.service.ts';
import { createSignInFlows } from '../two-factor/sign-in-flow.ts';
import { signedInAnswer } from '../two-factor/signed-in.ts';
import { createTwoFactorService } from '../two-factor/two-factor.service.ts';
import { createAuthService } from './auth.service.ts';

export function registerAuthRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const auth = createAuthService(ctx.deps);
  const twoFactor = createTwoFactorService(ctx.deps);
  const passkeys = createPasskeyService(ctx.deps);
  const flows = createSignInFlows(ctx.deps.config.sessionSecret);
  const critical = { onRequest: ctx.criticalLimit };
  const checked = { ...critical, preHandler: createTurnstileCheck(ctx.deps, ctx.sessions) };

  /**
   * A right password signs in, unless the user has two-factor sign-in: then no session yet, but new-api's answer
   * that a second step is needed (`require_2fa`), which `/user/login/2fa` or a passkey completes (docs/adr/0044).
   */
  app.post('/user/login', checked, async (request, reply) => {
    const user = await auth.login(parseInput(loginSchema, request.body));
    const enrolled = await twoFactor.isEnabled(user.id);
    if (enrolled) {
      const flow = flows.begin(request, reply, user);
      const pending: SecondStepRequired = {
        require_2fa: true,
        flow_token: flow.token,
        expires_at: flow.expiresAt,
        passkey: await passkeys.hasPasskeys(user.id),
      };
      return ok(pending, 'enter the code of your authenticator app, a backup code, or use a passkey');
    }
    startSession(request, reply, ctx.sessions, user);
    return ok(signedInAnswer(user, twoFactor.mustEnrol(user, enrolled)));
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
