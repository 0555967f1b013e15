/**
 * OpenAI's legacy billing endpoints (reference §2.2), which older clients and balance-checking tools call with an
 * API key to show what is left:
 * - `GET /dashboard/billing/subscription` (and under `/v1`): `hard_limit_usd` and friends are the total granted,
 *   remaining + used, of the token when `DisplayTokenStatEnabled`, else of its owner; in dollars when
 *   `DisplayInCurrencyEnabled` (quota ÷ `QuotaPerUnit`), else in quota; an unlimited token shows 100000000.
 *   `access_until` is the token's expiry (0 for never, or when the owner's figures are shown).
 * - `GET /dashboard/billing/usage` (and under `/v1`): `total_usage` is the used amount in hundredths (cents).
 *
 * These are not model requests: they read the token or user row, whose balance and used quota always include the
 * same settled calls (the batching writer writes both in one transaction), and are not subject to the per-user
 * model request limit.
 */

import { tokens, users } from '@turnpike/core/db/schema/index';
import { isDatabaseUnreachable } from '@turnpike/core/db/unreachable';
import { NEVER_EXPIRES } from '@turnpike/core/domain/tokens';
import { eq } from 'drizzle-orm';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RelayError } from './contract.ts';
import { DATABASE_RETRY_AFTER_SECONDS, gatewayFailureOf, localError, toOpenAiErrorBody } from './errors.ts';
import { authenticateRequest } from './pipeline/authenticate-request.ts';
import type { RelayContext } from './pipeline/context.ts';
import type { Caller } from './state/auth-cache.ts';

/** What an unlimited token reports as its limit, as the reference does. */
export const UNLIMITED_AMOUNT = 100_000_000;

interface Figures {
  readonly remain: number;
  readonly used: number;
  readonly unlimited: boolean;
  /** Unix seconds; 0 for never. */
  readonly accessUntil: number;
}

const sendError = (request: FastifyRequest, reply: FastifyReply, error: RelayError) =>
  reply
    .code(error.status)
    .header('content-type', 'application/json')
    .send(toOpenAiErrorBody(error, request.id));

async function figuresOf(ctx: RelayContext, caller: Caller): Promise<Figures | undefined> {
  const { db, options } = ctx.deps;
  if (options.get('DisplayTokenStatEnabled')) {
    const [row] = await db
      .select({
        remain: tokens.remainQuota,
        used: tokens.usedQuota,
        unlimited: tokens.unlimitedQuota,
        expiredTime: tokens.expiredTime,
      })
      .from(tokens)
      .where(eq(tokens.id, caller.token.id));
    if (!row) return undefined;
    return {
      remain: row.remain,
      used: row.used,
      unlimited: row.unlimited,
      accessUntil: row.expiredTime === NEVER_EXPIRES || row.expiredTime < 0 ? 0 : row.expiredTime,
    };
  }
  const [row] = await db
    .select({ remain: users.quota, used: users.usedQuota })
    .from(users)
    .where(eq(users.id, caller.user.id));
  if (!row) return undefined;
  return {
    remain: row.remain,
    used: row.used,
    unlimited: false,
    accessUntil: 0,
  };
}

/** Quota in the unit the options ask for: dollars, or raw quota. */
function toAmount(ctx: RelayContext, quota: number): number {
  const { options } = ctx.deps;
  return options.get('DisplayInCurrencyEnabled') ? quota / options.get('QuotaPerUnit') : quota;
}

async function withFigures(
  ctx: RelayContext,
  request: FastifyRequest,
  reply: FastifyReply,
  answer: (figures: Figures) => unknown,
): Promise<FastifyReply> {
  const auth = await authenticateRequest(ctx, request);
  if (!auth.ok) return sendError(request, reply, auth.error);
  const figures = await figuresOf(ctx, auth.caller);
  if (!figures)
    return sendError(
      request,
      reply,
      localError(401, 'invalid_api_key', 'this API key no longer exists', 'invalid_request_error'),
    );
  return reply.send(answer(figures));
}

export function getSubscription(ctx: RelayContext, request: FastifyRequest, reply: FastifyReply) {
  return withFigures(ctx, request, reply, (figures) => {
    const amount = figures.unlimited ? UNLIMITED_AMOUNT : toAmount(ctx, figures.remain + figures.used);
    return {
      object: 'billing_subscription',
      has_payment_method: true,
      soft_limit_usd: amount,
      hard_limit_usd: amount,
      system_hard_limit_usd: amount,
      access_until: figures.accessUntil,
    };
  });
}

export function getUsage(ctx: RelayContext, request: FastifyRequest, reply: FastifyReply) {
  return withFigures(ctx, request, reply, (figures) => ({
    object: 'list',
    total_usage: toAmount(ctx, figures.used) * 100,
  }));
}

/** Registers both routes at the root and under `/v1`, answering failures in OpenAI's error shape. */
export async function registerBillingCompat(app: FastifyInstance, ctx: RelayContext): Promise<void> {
  await app.register(async (scope) => {
    scope.setErrorHandler((error: FastifyError, request, reply) => {
      if (isDatabaseUnreachable(error)) {
        reply.header('retry-after', String(DATABASE_RETRY_AFTER_SECONDS));
        return sendError(request, reply, gatewayFailureOf(error));
      }
      request.log.error({ err: error }, 'billing compat request failed');
      return sendError(request, reply, localError(500, 'internal_error', 'internal error of the gateway'));
    });
    for (const prefix of ['', '/v1']) {
      scope.get(`${prefix}/dashboard/billing/subscription`, (request, reply) =>
        getSubscription(ctx, request, reply),
      );
      scope.get(`${prefix}/dashboard/billing/usage`, (request, reply) => getUsage(ctx, request, reply));
    }
  });
}
