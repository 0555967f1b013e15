import {
  bindEmailSchema,
  emailQuerySchema,
  resetPasswordSchema,
} from '@turnpike/core/contracts/verification';
import { Role } from '@turnpike/core/domain/users';
import { createSmtpMailer } from '@turnpike/core/mail/mailer';
import type { FastifyInstance } from 'fastify';
import { currentUser } from '../../http/auth.ts';
import { ok } from '../../http/reply.ts';
import type { RouteContext } from '../../http/route-context.ts';
import { createTurnstileCheck } from '../../http/turnstile.ts';
import { parseInput } from '../../http/validate.ts';
import { createVerificationService, RESET_SENT_MESSAGE } from './verification.service.ts';

/** Email verification codes, password reset and email binding. */
export function registerVerificationRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const log = app.log;
  const service = createVerificationService(
    ctx.deps,
    createSmtpMailer(ctx.deps.options.get.bind(ctx.deps.options), {
      onError: (err) => log.warn({ err }, 'mail could not be sent'),
    }),
    { onBackgroundError: (err) => log.warn({ err }, 'password reset mail could not be sent') },
  );
  const critical = { onRequest: ctx.criticalLimit };
  const humanCheck = createTurnstileCheck(ctx.deps, ctx.sessions);

  app.get('/verification', { ...critical, preHandler: humanCheck }, async (request) => {
    const { email } = parseInput(emailQuerySchema, request.query);
    await service.sendVerificationCode(email);
    return ok(undefined, 'a verification code has been sent to your email address');
  });

  app.get('/reset_password', { ...critical, preHandler: humanCheck }, async (request) => {
    const { email } = parseInput(emailQuerySchema, request.query);
    await service.sendResetLink(email);
    return ok(undefined, RESET_SENT_MESSAGE);
  });

  app.post('/user/reset', critical, async (request) => {
    const { email, token } = parseInput(resetPasswordSchema, request.body);
    return ok(await service.resetPassword(email, token), 'your password has been reset');
  });

  app.get(
    '/oauth/email/bind',
    { ...critical, preHandler: ctx.auth.requireRole(Role.User) },
    async (request) => {
      const { email, code } = parseInput(bindEmailSchema, request.query);
      await service.bindEmail(currentUser(request), email, code);
      return ok(undefined, 'your email address has been bound');
    },
  );
}
