/**
 * The shared pipeline of every relayed endpoint (reference §4.1–4.3): authenticate → rate limit → read the
 * request (the endpoint's `prepare`) → model limits → sensitive words in the prompt → price → reserve → attempts
 * over channels → relay the answer → settle → log. The reservation is settled exactly once on every path:
 * success, upstream error, client disconnect, exception — the refund happens before an error is sent, so a
 * client that checks its balance after a failure sees it back.
 */

import { estimateQuota } from '@turnpike/core/billing/pre-consume';
import { isPricingRefusal, type Pricing } from '@turnpike/core/billing/ratios';
import { imageQuota } from '@turnpike/core/billing/settle';
import { isRoot } from '@turnpike/core/domain/users';
import { type Billing, settle } from '../books/settle.ts';
import type { Payer } from '../books/settlement-context.ts';
import {
  type EndpointSpec,
  type Ingress,
  isRelayError,
  type PreparedRequest,
  type RelayError,
  type RelayReply,
  type RelayRequest,
} from '../contract.ts';
import { localError } from '../errors.ts';
import { admitRequestLimits, applyRefusalHeaders } from '../limits/admit.ts';
import { callerWindows } from '../limits/windows.ts';
import { countLongTexts, LONG_TEXT } from '../metering/tokens.ts';
import { markStep, startSteps } from '../metrics/tracing.ts';
import { tiersFor } from '../routing/pick.ts';
import type { Caller } from '../state/auth-cache.ts';
import { runAttempts } from './attempts.ts';
import { checkModelAllowed } from './authenticate.ts';
import { authenticateRequest } from './authenticate-request.ts';
import { holdQuota } from './billing.ts';
import type { RelayContext } from './context.ts';
import { type Exchange, growExchange, type PreparedExchange } from './exchange.ts';
import { sendError } from './respond.ts';
import { checkPrompt } from './sensitive-words.ts';
import { openStoredCall } from './stored-call.ts';

/** `/v1/*`: token auth, then the shared pipeline. */
export async function handleRelay(
  ctx: RelayContext,
  spec: EndpointSpec,
  ingress: Ingress,
  request: RelayRequest,
  reply: RelayReply,
): Promise<RelayReply | undefined> {
  const startedAt = performance.now();
  const steps = startSteps(startedAt);
  const auth = await authenticateRequest(ctx, request);
  if (!auth.ok) return sendError(request, reply, auth.error, ingress);
  markStep(steps, 'authenticate');
  const { caller } = auth;
  const limited = await limitRequest(ctx, request, reply, caller);
  if (limited) return sendError(request, reply, limited, ingress);
  markStep(steps, 'rate limit');
  return relayAs(ctx, { request, reply, spec, ingress, caller, startedAt, steps, isPlayground: false });
}

/** The per-user request rate limit: the 429 to answer (counted in `/metrics`), or undefined to go on. */
export async function limitRequest(
  ctx: RelayContext,
  request: RelayRequest,
  reply: RelayReply,
  caller: Caller,
): Promise<RelayError | undefined> {
  const limited = await ctx.rateLimit.admit(request, reply, caller);
  if (limited) ctx.metrics.recordRateLimited();
  return limited;
}

/** The pipeline after authentication, for a caller from a token or from a console session (`/pg`). */
export async function relayAs(ctx: RelayContext, exchange: Exchange): Promise<RelayReply | undefined> {
  const { request, reply } = exchange;
  const prepared = await exchange.spec.prepare(request);
  if (isRelayError(prepared)) return sendError(request, reply, prepared, exchange.ingress);
  markStep(exchange.steps, 'read request');
  try {
    return await relayPrepared(ctx, growExchange(exchange, { prepared }));
  } finally {
    await prepared
      .dispose?.()
      .catch((err: unknown) => request.log.warn({ err }, 'could not remove an upload spool'));
  }
}

/**
 * No channel serves the model in the caller's group at all: the model is unknown here, a 404 as OpenAI answers for
 * a model it does not have (bad input is never a 5xx). A model whose channels are all disabled or resting is a
 * 503 from the attempts instead: that is the gateway's trouble, and it passes.
 */
export function unknownModel(model: string, group: string): RelayError {
  return localError(
    404,
    'model_not_found',
    `the model ${model} does not exist or no channel serves it in group ${group}`,
    'invalid_request_error',
  );
}

/** Whether the price of the request depends on its prompt's size (the model has long-context tiers). */
const isTiered = (pricing: Pricing): boolean => (pricing.shapes?.longContextTiers?.length ?? 0) > 0;

/** The service tier the request asks for (`service_tier`, OpenAI's and Gemini's request field), if any. */
function requestedServiceTier(prepared: PreparedRequest): string | undefined {
  const body = prepared.payload.kind === 'json' ? prepared.payload.body : undefined;
  const tier = body?.service_tier ?? body?.serviceTier;
  return typeof tier === 'string' ? tier.toLowerCase() : undefined;
}

/**
 * The most the request may cost, for the balance check and the reservation: at the long-context tier its prompt
 * reaches and the service tier it asks for (docs/adr/0042), so a long call cannot overdraw a short estimate.
 */
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
    // Read (and so counted) only when the estimate uses it: a request that names its output limit, or one whose
    // model is priced by the prompt's size.
    promptTokens: prepared.maxTokens || isTiered(pricing) ? prepared.promptTokens : 0,
    maxTokens: prepared.maxTokens,
    preConsumedTokens: options.get('PreConsumedQuota'),
    quotaPerUnit,
    serviceTier: requestedServiceTier(prepared),
  });
}

async function relayPrepared(ctx: RelayContext, exchange: PreparedExchange): Promise<RelayReply | undefined> {
  const { request, reply, caller, prepared, steps } = exchange;
  const { model } = prepared;
  const refused = checkModelAllowed(caller, model);
  if (refused) return sendError(request, reply, refused, exchange.ingress);
  const sensitive = checkPrompt(ctx, prepared.promptTexts);
  if (sensitive) return sendError(request, reply, sensitive, exchange.ingress);

  // A model no channel serves is unknown to this gateway, whatever its price (reference §4.2).
  if (caller.forcedChannelId === undefined && tiersFor(ctx.channels.table, caller.group, model).length === 0)
    return sendError(request, reply, unknownModel(model, caller.group), exchange.ingress);
  const pricing = ctx.prices.pricingOf({
    model,
    group: caller.group,
    acceptUnsetModelRatio: caller.user.acceptUnsetModelRatio,
    isRoot: isRoot(caller.user.role),
  });
  // A served model without a price is a setting an administrator must make, not a failure of the gateway.
  if (isPricingRefusal(pricing))
    return sendError(
      request,
      reply,
      localError(400, pricing.code, pricing.message, 'invalid_request_error'),
      exchange.ingress,
    );
  // The chain a Responses call continues is read before anything is held: an unknown id holds nothing.
  const stored = await openStoredCall(ctx, exchange);
  if (isRelayError(stored)) return sendError(request, reply, stored, exchange.ingress);

  markStep(steps, 'price');
  // A long prompt whose count the hold reads (the request names its output limit, as coding agents' do) is counted
  // a slice at a time first, so counting it does not hold up every other call and stream of the process.
  if (
    (prepared.maxTokens || isTiered(pricing)) &&
    prepared.promptTexts.some((text) => text.length >= LONG_TEXT)
  )
    await countLongTexts(prepared.promptTexts, model);
  const limited = await admitRequestLimits(ctx, exchange.ingress, reply, caller, prepared);
  if (!limited.ok) return sendError(request, reply, limited.error, exchange.ingress);
  const estimate = estimateOf(ctx, pricing, prepared);
  const payer: Payer = {
    userId: caller.user.id,
    tokenId: caller.token.id,
    tokenUnlimited: exchange.isPlayground || caller.token.unlimitedQuota,
    windows: callerWindows(ctx.deps.options, caller, !exchange.isPlayground),
    allowances: caller.user.subscriptions,
  };
  const held = await holdQuota(ctx, payer, estimate).catch((error: unknown) => {
    limited.ticket?.settle(0);
    throw error;
  });
  if (!held.ok) {
    limited.ticket?.settle(0);
    applyRefusalHeaders(reply, held.error);
    return sendError(request, reply, held.error, exchange.ingress);
  }
  markStep(steps, 'hold');
  const billing: Billing = {
    payer,
    pricing,
    hold: held.hold,
    fixedQuota: prepared.image ? estimate : undefined,
    settled: false,
    steps,
    limits: limited.ticket ? [limited.ticket] : [],
  };

  // A client that goes away cancels the upstream request; the bill covers what was produced until then.
  const clientGone = new AbortController();
  reply.raw.on('close', () => {
    if (!reply.raw.writableFinished) clientGone.abort();
  });

  const capture = ctx.contentLogs.open(exchange);
  let failure: RelayError | undefined;
  try {
    failure = await runAttempts(ctx, growExchange(exchange, { billing, clientGone, capture, stored }));
  } finally {
    capture?.finish();
    // Every exit path that did not settle (errors, exceptions, a disconnect before the answer) refunds.
    if (!billing.settled) {
      await settle(ctx, request, caller, billing, undefined).catch((err: unknown) =>
        request.log.error({ err }, 'could not refund a reservation'),
      );
    }
    // Settled with the real usage above; a slot whose settlement threw is freed all the same.
    for (const ticket of billing.limits ?? []) ticket.settle(0);
  }
  if (failure && !reply.sent) {
    applyRefusalHeaders(reply, failure);
    return sendError(request, reply, failure, exchange.ingress);
  }
  return reply;
}
