import {
  passkeyAssertionSchema,
  passkeyRegistrationSchema,
  passkeyRenameSchema,
  passkeySignInBeginSchema,
} from '@turnpike/core/contracts/passkeys';
import { Role } from '@turnpike/core/domain/users';
import { AppError } from '@turnpike/core/errors';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { currentUser } from '../../http/auth.ts';
import { ok } from '../../http/reply.ts';
import type { RouteContext } from '../../http/route-context.ts';
import { renewSession, startSession } from '../../http/session.ts';
import { parseId, parseInput } from '../../http/validate.ts';
import { createSignInFlows } from '../two-factor/sign-in-flow.ts';
import { signedInAnswer } from '../two-factor/signed-in.ts';
import { createTwoFactorService } from '../two-factor/two-factor.service.ts';
import { createPasskeyService } from './passkeys.service.ts';

const SIGN_IN_AGAIN = 'the sign-in has expired; enter your password again';

/**
 * new-api's passkey routes (`/user/passkey*`), with several named passkeys per user: the user's own list,
 * registration and removal, password-less sign-in, the second step after a password (`flow_token` in the body),
 * and an administrator's reset (docs/adr/0044).
 */
export function registerPasskeyRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const passkeys = createPasskeyService(ctx.deps);
  const twoFactor = createTwoFactorService(ctx.deps);
  const flows = createSignInFlows(ctx.deps.config.sessionSecret);
  const self = { preHandler: ctx.auth.requireRole(Role.User) };
  const admin = { preHandler: ctx.auth.requireRole(Role.Admin) };
  const critical = { onRequest: ctx.criticalLimit };

  const keepThisSession = (request: FastifyRequest, reply: FastifyReply, generation: number) =>
    renewSession(request, reply, ctx.sessions, {
      id: currentUser(request).id,
      sessionGeneration: generation,
    });

  /** The password step's user when the body carries its flow token (the second step), else undefined. */
  const flowUser = async (request: FastifyRequest, token: string | undefined) => {
    if (token === undefined) return undefined;
    const flow = flows.read(request, token);
    if (!flow) throw new AppError('UNAUTHENTICATED', SIGN_IN_AGAIN);
    return twoFactor.userOfFlow(flow);
  };

  app.get('/user/passkey', self, async (request) => ok(await passkeys.status(currentUser(request).id)));

  app.post('/user/passkey/register/begin', self, async (request) =>
    ok({ options: await passkeys.registerBegin(currentUser(request)) }),
  );

  app.post('/user/passkey/register/finish', self, async (request, reply) => {
    const input = parseInput(passkeyRegistrationSchema, request.body);
    keepThisSession(request, reply, await passkeys.registerFinish(currentUser(request), input));
    return ok(undefined, 'passkey registered');
  });

  app.put('/user/passkey/:id', self, async (request) => {
    const { name } = parseInput(passkeyRenameSchema, request.body);
    await passkeys.rename(currentUser(request), parseId((request.params as { id: string }).id), name);
    return ok(undefined, 'saved');
  });

  app.delete('/user/passkey', self, async (request, reply) => {
    keepThisSession(request, reply, await passkeys.remove(currentUser(request), 'all'));
    return ok(undefined, 'passkeys removed');
  });

  app.delete('/user/passkey/:id', self, async (request, reply) => {
    const id = parseId((request.params as { id: string }).id);
    keepThisSession(request, reply, await passkeys.remove(currentUser(request), id));
    return ok(undefined, 'passkey removed');
  });

  app.post('/user/passkey/login/begin', critical, async (request) => {
    const { flow_token } = parseInput(passkeySignInBeginSchema, request.body);
    return ok({ options: await passkeys.signInBegin(await flowUser(request, flow_token)) });
  });

  app.post('/user/passkey/login/finish', critical, async (request, reply) => {
    const input = parseInput(passkeyAssertionSchema, request.body);
    const forUser = await flowUser(request, input.flow_token);
    const user = await passkeys.signInFinish(input, forUser);
    if (forUser) flows.end(reply);
    startSession(request, reply, ctx.sessions, user);
    return ok(signedInAnswer(user, twoFactor.mustEnrol(user, await twoFactor.isEnabled(user.id))));
  });

  /** new-api's administrator reset of a user's passkeys. */
  app.delete('/user/:id/reset_passkey', admin, async (request) => {
    const id = parseId((request.params as { id: string }).id);
    const removed = await twoFactor.resetSecondFactors(currentUser(request), id, {
      totp: false,
      passkeys: true,
    });
    if (removed.passkeys === 0) throw new AppError('BAD_REQUEST', 'this user has no passkey');
    return ok(removed, "the user's passkeys have been removed");
  });
}
