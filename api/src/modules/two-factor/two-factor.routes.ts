import { secondStepSchema, twoFactorCodeSchema } from '@turnpike/core/contracts/two-factor';
import { Role } from '@turnpike/core/domain/users';
import { AppError } from '@turnpike/core/errors';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { currentUser } from '../../http/auth.ts';
import { ok } from '../../http/reply.ts';
import type { RouteContext } from '../../http/route-context.ts';
import { renewSession, startSession } from '../../http/session.ts';
import { parseId, parseInput } from '../../http/validate.ts';
import { createSignInFlows } from './sign-in-flow.ts';
import { signedInAnswer } from './signed-in.ts';
import { createTwoFactorService } from './two-factor.service.ts';

/** Secrets and backup codes are shown once: no cache, no proxy, keeps them. */
const noStore = async (_request: FastifyRequest, reply: FastifyReply) => {
  reply.header('cache-control', 'no-store');
};

/**
 * new-api's two-factor routes (docs/adr/0044): the user's own under `/user/2fa/*`, the second step of a password
 * sign-in at `/user/login/2fa`, and the administrators' statistics and reset.
 */
export function registerTwoFactorRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const service = createTwoFactorService(ctx.deps);
  const flows = createSignInFlows(ctx.deps.config.sessionSecret);
  const self = { onRequest: noStore, preHandler: ctx.auth.requireRole(Role.User) };
  const admin = { preHandler: ctx.auth.requireRole(Role.Admin) };

  /** After the user changed their own factors: their other sessions ended, this one goes on. */
  const keepThisSession = (request: FastifyRequest, reply: FastifyReply, generation: number) =>
    renewSession(request, reply, ctx.sessions, {
      id: currentUser(request).id,
      sessionGeneration: generation,
    });

  app.get('/user/2fa/status', self, async (request) => ok(await service.status(currentUser(request))));

  app.post('/user/2fa/setup', self, async (request) =>
    ok(
      await service.setup(currentUser(request)),
      'scan the QR code with your authenticator app, keep the backup codes, and enter a code to finish',
    ),
  );

  app.post('/user/2fa/enable', self, async (request, reply) => {
    const { code } = parseInput(twoFactorCodeSchema, request.body);
    keepThisSession(request, reply, await service.enable(currentUser(request), code, request.ip));
    return ok(undefined, 'two-factor sign-in is on');
  });

  app.post('/user/2fa/disable', self, async (request, reply) => {
    const { code } = parseInput(twoFactorCodeSchema, request.body);
    keepThisSession(request, reply, await service.disable(currentUser(request), code, request.ip));
    return ok(undefined, 'two-factor sign-in is off');
  });

  app.post('/user/2fa/backup_codes', self, async (request, reply) => {
    const { code } = parseInput(twoFactorCodeSchema, request.body);
    const made = await service.regenerateBackupCodes(currentUser(request), code, request.ip);
    keepThisSession(request, reply, made.generation);
    return ok({ backup_codes: made.backupCodes }, 'new backup codes made; the old ones no longer work');
  });

  /** The second step of a password sign-in: the code (or a backup code) starts the session. */
  app.post('/user/login/2fa', { onRequest: ctx.criticalLimit }, async (request, reply) => {
    const input = parseInput(secondStepSchema, request.body);
    const flow = flows.read(request, input.flow_token);
    if (!flow) throw new AppError('UNAUTHENTICATED', 'the sign-in has expired; enter your password again');
    const user = await service.completeSignIn(flow, input.code, request.ip);
    flows.end(reply);
    startSession(request, reply, ctx.sessions, user);
    return ok(signedInAnswer(user, false));
  });

  app.get('/user/2fa/stats', admin, async () => ok(await service.stats()));

  app.get('/user/:id/second_factors', admin, async (request) =>
    ok(await service.secondFactorsOf(currentUser(request), parseId((request.params as { id: string }).id))),
  );

  /** new-api's reset of a user's TOTP factor; `?passkeys=true` removes the user's passkeys as well. */
  app.delete('/user/:id/2fa', admin, async (request) => {
    const id = parseId((request.params as { id: string }).id);
    const passkeys = (request.query as { passkeys?: string }).passkeys === 'true';
    const removed = await service.resetSecondFactors(currentUser(request), id, { totp: true, passkeys });
    if (!removed.totp && removed.passkeys === 0)
      throw new AppError('BAD_REQUEST', 'this user has no second factor to reset');
    return ok(removed, "the user's second factor has been reset; they sign in with their password alone");
  });
}
