/**
 * The limit steps of the pipeline (docs/adr/0028): the request's own scopes (user or group, token, model) once,
 * after pricing and before the hold, and the channel's for each attempt. A refusal is a 429 in the caller's protocol
 * with its `Retry-After` and `X-RateLimit-*` headers, counted in `/metrics`.
 */

import type { Ingress, PreparedRequest, RelayError, RelayReply } from '../contract.ts';
import type { RelayContext } from '../pipeline/context.ts';
import type { Caller } from '../state/auth-cache.ts';
import type { RelayChannel } from '../state/channel-cache.ts';
import { applyHeaders, channelChecks, type LimitTicket, requestChecks } from './limiter.ts';

export type LimitStep = { ok: true; ticket: LimitTicket | undefined } | { ok: false; error: RelayError };

/** Tokens a request is charged at admission: its counted prompt and the output it asks for at most. */
export const estimateTokensOf = (prepared: PreparedRequest): number =>
  prepared.promptTokens + (prepared.maxTokens ?? prepared.reserveTokens ?? 0);

/** Headers of channel refusals, written only if the refusal is what the caller is finally answered with. */
const refusalHeaders = new WeakMap<RelayError, Readonly<Record<string, string>>>();

async function admit(
  ctx: RelayContext,
  ingress: Ingress,
  checks: ReturnType<typeof requestChecks>,
  prepared: PreparedRequest,
): Promise<LimitStep & { headers?: Readonly<Record<string, string>> }> {
  const admission = await ctx.limits.admit({
    checks,
    estimateTokens: () => estimateTokensOf(prepared),
    isAnthropic: ingress.format === 'anthropic',
  });
  if (admission.ok) return admission;
  ctx.metrics.recordRateLimited(admission.scope, admission.kind);
  return { ok: false, error: admission.error, headers: admission.headers };
}

/**
 * What a call or an attempt with no limit that applies is answered, at once: most calls have none, and the
 * limiter's round (promises, its store) is then work for nothing.
 */
const UNLIMITED: LimitStep = Object.freeze({ ok: true, ticket: undefined });

/** The user's (or group's), token's and model's limits. */
export function admitRequestLimits(
  ctx: RelayContext,
  ingress: Ingress,
  reply: RelayReply,
  caller: Caller,
  prepared: PreparedRequest,
): LimitStep | Promise<LimitStep> {
  const checks = requestChecks(
    ctx.deps.options,
    { userId: caller.user.id, group: caller.group, tokenId: caller.token.id, token: caller.token.limits },
    prepared.model,
  );
  if (checks.length === 0) return UNLIMITED;
  return admit(ctx, ingress, checks, prepared).then((step) => {
    if (!step.ok && step.headers) applyHeaders(reply, step.headers);
    return step;
  });
}

/** The channel's limits, for one attempt on it. */
export function admitChannelLimits(
  ctx: RelayContext,
  ingress: Ingress,
  channel: RelayChannel,
  prepared: PreparedRequest,
): LimitStep | Promise<LimitStep> {
  const checks = channelChecks(channel);
  if (checks.length === 0) return UNLIMITED;
  return admit(ctx, ingress, checks, prepared).then((step) => {
    if (!step.ok && step.headers) refusalHeaders.set(step.error, step.headers);
    return step;
  });
}

/** Keeps the headers of a refusal made outside this file (a quota window's) for `applyRefusalHeaders`. */
export function rememberRefusalHeaders(error: RelayError, headers: Readonly<Record<string, string>>): void {
  refusalHeaders.set(error, headers);
}

/** Writes the headers of a refusal when it is the error the caller is answered with. */
export function applyRefusalHeaders(reply: RelayReply, error: RelayError): void {
  const headers = refusalHeaders.get(error);
  if (headers) applyHeaders(reply, headers);
}
