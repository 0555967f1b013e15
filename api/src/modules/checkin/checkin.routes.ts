/**
 * Daily check-ins, in the reference's shape: `GET /api/user/checkin?month=YYYY-MM` answers the switch, the range
 * and the caller's history; `POST /api/user/checkin` checks in (behind the human check when Turnstile is on, as
 * the reference's is) and answers `{ quota_awarded, checkin_date }`.
 */
import { checkinQuerySchema } from '@turnpike/core/contracts/checkin';
import { Role } from '@turnpike/core/domain/closed-sets';
import type { FastifyInstance } from 'fastify';
import { currentUser } from '../../http/auth.ts';
import { ok } from '../../http/reply.ts';
import type { RouteContext } from '../../http/route-context.ts';
import { createTurnstileCheck } from '../../http/turnstile.ts';
import { parseInput } from '../../http/validate.ts';
import { type CheckinServiceOptions, createCheckinService } from './checkin.service.ts';

export function registerCheckinRoutes(
  app: FastifyInstance,
  ctx: RouteContext,
  options: CheckinServiceOptions = {},
): void {
  const checkins = createCheckinService(ctx.deps, options);
  const signedIn = ctx.auth.requireRole(Role.User);

  app.get('/user/checkin', { preHandler: signedIn }, async (request) => {
    const { month } = parseInput(checkinQuerySchema, request.query);
    return ok(await checkins.status(currentUser(request), month));
  });

  app.post(
    '/user/checkin',
    { preHandler: [signedIn, createTurnstileCheck(ctx.deps, ctx.sessions)] },
    async (request) => ok(await checkins.checkin(currentUser(request)), 'checked in'),
  );
}
