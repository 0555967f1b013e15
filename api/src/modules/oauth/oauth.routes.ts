import { toSessionUser } from '@turnpike/core/contracts/users';
import { randomString } from '@turnpike/core/crypto/random';
import type { User } from '@turnpike/core/db/schema/users';
import { Role } from '@turnpike/core/domain/users';
import { AppError } from '@turnpike/core/errors';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { currentUser } from '../../http/auth.ts';
import { ok } from '../../http/reply.ts';
import type { RouteContext } from '../../http/route-context.ts';
import { readSession, type SessionData, writeSession } from '../../http/session.ts';
import { parseInput } from '../../http/validate.ts';
import { createSecondStepGate, SECOND_STEP_MESSAGE } from '../two-factor/second-step.ts';
import { CODE_PROVIDERS, createIdentityProviders } from './identity-providers.ts';
import { createOAuthService } from './oauth.service.ts';

const stateQuery = z.object({ aff: z.string().trim().max(32).optional() });
const codeQuery = z.object({
  code: z.string({ error: 'the sign-in code is missing' }).trim().min(1, 'the sign-in code is missing'),
  state: z.string().optional().default(''),
});
const telegramQuery = z.record(z.string(), z.string());

/**
 * Third-party sign-in and binding (reference §9.7): `state` before the redirect, the code callbacks of GitHub,
 * OIDC and LinuxDO, WeChat's code, and the Telegram widget. The email binding lives with verification.
 */
export function registerOAuthRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const { deps, sessions } = ctx;
  const providers = createIdentityProviders(deps.config, deps.options);
  const service = createOAuthService(deps);
  const secondStep = createSecondStepGate(deps, sessions);
  /** A third party's word is a first step like a password: a user with a second factor is asked for it. */
  const signInAs = async (request: FastifyRequest, reply: FastifyReply, user: User) => {
    const next = await secondStep.proceed(request, reply, user);
    return 'pending' in next ? ok(next.pending, SECOND_STEP_MESSAGE) : ok(toSessionUser(user));
  };
  const critical = { onRequest: ctx.criticalLimit };

  /** The console's own address, for the redirect URI a provider checks: ServerAddress, else this request's. */
  const consoleAddress = (request: FastifyRequest) =>
    deps.options.get('ServerAddress').replace(/\/+$/, '') || `${request.protocol}://${request.host}`;

  app.get('/oauth/state', critical, async (request, reply) => {
    const { aff } = parseInput(stateQuery, request.query);
    const state = randomString(12);
    const session: SessionData = { ...readSession(request, sessions), oauthState: state };
    if (aff) session.aff = aff;
    writeSession(request, reply, sessions, session);
    return ok(state);
  });

  for (const name of CODE_PROVIDERS) {
    app.get(`/oauth/${name}`, critical, async (request, reply) => {
      const { code, state } = parseInput(codeQuery, request.query);
      const session = readSession(request, sessions);
      if (!session.oauthState || state !== session.oauthState) {
        throw new AppError('FORBIDDEN', 'the sign-in state does not match; start the sign-in again');
      }
      // The state is spent whatever happens next: a code is good for one try.
      const { oauthState: _spent, ...rest } = session;
      writeSession(request, reply, sessions, rest);
      const identity = await providers.code[name](code, `${consoleAddress(request)}/oauth/${name}`);
      const signedIn = await ctx.auth.tryUser(request);
      if (signedIn) return ok(toSessionUser(await service.bind(signedIn.id, identity)), 'bind');
      return signInAs(
        request,
        reply,
        await service.signIn(identity, { register: true, affCode: session.aff }),
      );
    });
  }

  app.get('/oauth/wechat', critical, async (request, reply) => {
    const { code } = parseInput(codeQuery, request.query);
    const identity = await providers.wechat(code);
    const user = await service.signIn(identity, {
      register: true,
      affCode: readSession(request, sessions).aff,
    });
    return signInAs(request, reply, user);
  });

  app.get(
    '/oauth/wechat/bind',
    { ...critical, preHandler: ctx.auth.requireRole(Role.User) },
    async (request) => {
      const { code } = parseInput(codeQuery, request.query);
      const identity = await providers.wechat(code);
      await service.bind(currentUser(request).id, identity);
      return ok(undefined, 'your WeChat account has been bound');
    },
  );

  app.get('/oauth/telegram/login', critical, async (request, reply) => {
    const identity = providers.telegram(parseInput(telegramQuery, request.query));
    return signInAs(request, reply, await service.signIn(identity, { register: false }));
  });

  // The console calls it with the widget's fields (a JSON answer); a widget set up with this address as its
  // callback sends the browser itself, which is sent back to the personal settings.
  app.get('/oauth/telegram/bind', critical, async (request, reply) => {
    const uid = (await ctx.auth.tryUser(request))?.id;
    if (!uid) throw new AppError('UNAUTHENTICATED', 'sign in first, then bind your Telegram account');
    const identity = providers.telegram(parseInput(telegramQuery, request.query));
    await service.bind(uid, identity);
    if (request.headers.accept?.includes('application/json'))
      return ok(undefined, 'your Telegram account has been bound');
    return reply.redirect('/personal', 302);
  });
}
