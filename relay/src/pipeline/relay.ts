/**
 * The shared pipeline of every relayed endpoint (reference §4.1–4.3): authenticate → rate limit → read the
 * request (the endpoint's `prepare`) → model limits → sensitive words in the prompt → price → reserve → attempts
 * over channels → relay the answer → settle → log. The reservation is settled exactly once on every path:
 * success, upstream error, client disconnect, exception — the refund happens before an error is sent, so a
 * client that checks its balance after a failure sees it back.
 */
import { decideReservation, estimateQuota } from '@turnpike/core/billing/pre-consume';
import { isPricingRefusal, type Pricing, resolvePricing } from '@turnpike/core/billing/ratios';
import { imageQuota } from '@turnpike/core/billing/settle';
import { isRoot } from '@turnpike/core/domain/users';
import { localError, type RelayError } from '../errors.ts';
import { runAttempts } from './attempts.ts';
import { type Caller, checkModelAllowed } from './authenticate.ts';
import { authenticateRequest } from './authenticate-request.ts';
import { type Payer, reserveQuota } from './billing.ts';
import type { RelayContext } from './context.ts';
import { type EndpointSpec, isRelayError, type PreparedRequest } from './endpoints/spec.ts';
import type { RelayReply, RelayRequest } from './exchange.ts';
import { sendError } from './respond.ts';
import { checkPrompt } from './sensitive-words.ts';
import { type Billing, settle } from './settle.ts';

/** `/v1/*`: token auth, then the shared pipeline. */
export async function handleRelay(
  ctx: RelayContext,
  spec: EndpointSpec,
  request: RelayRequest,
  reply: RelayReply,
): Promise<RelayReply | undefined> {
  const startedAt = performance.now();
  const auth = await authenticateRequest(ctx, request);
  if (!auth.ok) return sendError(request, reply, auth.error);
  const { caller } = auth;
  const limited = await ctx.rateLimit.admit(request, reply, caller);
  if (limited) return sendError(request, reply, limited);
  return relayAs(ctx, spec, request, reply, caller, { startedAt, isPlayground: false });
}

export interface RelayAsOptions {
  readonly startedAt: number;
  /** The console playground: billed to the user only (no token balance). */
  readonly isPlayground: boolean;
}

/** The pipeline after authentication, for a caller from a token or from a console session (`/pg`). */
export async function relayAs(
  ctx: RelayContext,
  spec: EndpointSpec,
  request: RelayRequest,
  reply: RelayReply,
  caller: Caller,
  options: RelayAsOptions,
): Promise<RelayReply | undefined> {
  const prepared = await spec.prepare(request);
  if (isRelayError(prepared)) return sendError(request, reply, prepared);
  try {
    return await relayPrepared(ctx, spec, request, reply, caller, prepared, options);
  } finally {
    await prepared
      .dispose?.()
      .catch((err: unknown) => request.log.warn({ err }, 'could not remove an upload spool'));
  }
}

/** The most the request may cost, for the balance check and the reservation. */
function estimateOf(ctx: RelayContext, pricing: Pricing, prepared: PreparedRequest): number {
  const { options } = ctx.deps;
  const quotaPerUnit = options.get('QuotaPerUnit');
  if (prepared.image) return imageQuota(pricing, prepared.image, quotaPerUnit);
  if (
    prepared.reserveTokens !== undefined &&
    pricing.kind === 'per-token' &&
    prepared.maxTokens === undefined
  )
    return Math.trunc(prepared.reserveTokens * pricing.modelRatio * pricing.groupRatio);
  return estimateQuota({
    pricing,
    // Read (and so counted) only when the estimate uses it: a request that names its output limit.
    promptTokens: prepared.maxTokens ? prepared.promptTokens : 0,
    maxTokens: prepared.maxTokens,
    preConsumedTokens: options.get('PreConsumedQuota'),
    quotaPerUnit,
  });
}

async function relayPrepared(
  ctx: RelayContext,
  spec: EndpointSpec,
  request: RelayRequest,
  reply: RelayReply,
  caller: Caller,
  prepared: PreparedRequest,
  { startedAt, isPlayground }: RelayAsOptions,
): Promise<RelayReply | undefined> {
  const { options } = ctx.deps;
  const { model } = prepared;
  const refused = checkModelAllowed(caller, model);
  if (refused) return sendError(request, reply, refused);
  const sensitive = checkPrompt(ctx, prepared.promptTexts);
  if (sensitive) return sendError(request, reply, sensitive);

  const pricing = resolvePricing({
    tables: {
      modelRatio: options.get('ModelRatio'),
      completionRatio: options.get('CompletionRatio'),
      cacheRatio: options.get('CacheRatio'),
      modelPrice: options.get('ModelPrice'),
      groupRatio: options.get('GroupRatio'),
    },
    model,
    group: caller.group,
    selfUseMode: options.get('SelfUseModeEnabled'),
    acceptUnsetModelRatio: caller.user.acceptUnsetModelRatio,
    isRoot: isRoot(caller.user.role),
  });
  if (isPricingRefusal(pricing))
    return sendError(request, reply, localError(500, pricing.code, pricing.message));

  const estimate = estimateOf(ctx, pricing, prepared);
  const quotaPerUnit = options.get('QuotaPerUnit');
  const decision = decideReservation({
    estimate,
    userQuota: caller.user.quota,
    token: isPlayground
      ? null
      : { unlimited: caller.token.unlimitedQuota, remainQuota: caller.token.remainQuota },
    // A per-image bill is known exactly: it is always reserved, so the check and the charge are one price.
    trustQuota: prepared.image ? Number.POSITIVE_INFINITY : 10 * quotaPerUnit,
  });
  if (!decision.ok) return sendError(request, reply, localError(403, decision.code, decision.message));
  const payer: Payer = {
    userId: caller.user.id,
    tokenId: caller.token.id,
    tokenUnlimited: isPlayground || caller.token.unlimitedQuota,
  };
  if (decision.reserve > 0) {
    const reserved = await reserveQuota(ctx.deps.db, payer, decision.reserve);
    if (!reserved.ok) {
      const message =
        reserved.code === 'insufficient_user_quota'
          ? `user quota is not enough (needs ${decision.reserve})`
          : `token quota is not enough (needs ${decision.reserve})`;
      return sendError(request, reply, localError(403, reserved.code, message));
    }
    ctx.auth.setBalances(caller.user.id, reserved.userQuota, caller.token.id, reserved.tokenQuota);
  }
  const billing: Billing = {
    payer,
    pricing,
    reserved: decision.reserve,
    trusted: decision.trusted,
    fixedQuota: prepared.image ? estimate : undefined,
    settled: false,
  };

  // A client that goes away cancels the upstream request; the bill covers what was produced until then.
  const clientGone = new AbortController();
  reply.raw.on('close', () => {
    if (!reply.raw.writableFinished) clientGone.abort();
  });

  let failure: RelayError | undefined;
  try {
    failure = await runAttempts(ctx, spec, request, reply, {
      caller,
      prepared,
      billing,
      clientGone,
      startedAt,
    });
  } finally {
    // Every exit path that did not settle (errors, exceptions, a disconnect before the answer) refunds.
    if (!billing.settled) {
      await settle(ctx, request, caller, billing, undefined).catch((err: unknown) =>
        request.log.error({ err }, 'could not refund a reservation'),
      );
    }
  }
  if (failure && !reply.sent) return sendError(request, reply, failure);
  return reply;
}
