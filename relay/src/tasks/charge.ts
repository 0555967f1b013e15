/**
 * What every task provider shares on the request path: who calls (token auth, `mj-api-secret` too), which channel
 * serves, what a submit costs, and the charge once the upstream accepted it. A submit holds its price on the
 * ledger before it goes upstream (pipeline/billing.ts) and settles exactly once: the price when the upstream
 * accepted the task, nothing otherwise. The debit and its consume log are written together by the batching writer,
 * as for every other call (books/settle.ts, docs/adr/0016).
 */

import { DEFAULT_MODEL_PRICE } from '@turnpike/core/billing/default-ratios';
import type { Hold } from '@turnpike/core/billing/ledger';
import {
  isPricingRefusal,
  lookupGroupRatio,
  lookupModelPrice,
  resolvePricing,
} from '@turnpike/core/billing/ratios';
import { ChannelStatus } from '@turnpike/core/domain/closed-sets';
import { LogType } from '@turnpike/core/domain/logs';
import { priceTablesOf } from '@turnpike/core/options/price-tables';
import type { FastifyRequest } from 'fastify';
import { type Dispatcher, fetch } from 'undici';
import { drawsOnWallet, type Payer } from '../books/settlement-context.ts';
import type { RelayError } from '../contract.ts';
import { localError } from '../errors.ts';
import { callerWindows } from '../limits/windows.ts';
import type { AuthResult } from '../pipeline/authenticate.ts';
import { authenticateRequest } from '../pipeline/authenticate-request.ts';
import { holdQuota } from '../pipeline/billing.ts';
import type { RelayContext } from '../pipeline/context.ts';
import { pickChannel, tiersFor } from '../routing/pick.ts';
import type { Caller } from '../state/auth-cache.ts';
import type { RelayChannel } from '../state/channel-cache.ts';

/**
 * Token auth of a task request. Midjourney clients send the key as `mj-api-secret` (and some send
 * `Authorization: Bearer midjourney-proxy` beside it): that header is used when Authorization is absent or that
 * placeholder (reference §3.2).
 */
export function authenticateTaskRequest(ctx: RelayContext, request: FastifyRequest): Promise<AuthResult> {
  const bearer = request.headers.authorization?.trim();
  const secret = request.headers['mj-api-secret'];
  const usesSecret =
    (!bearer || /^(bearer\s+)?midjourney-proxy$/i.test(bearer)) &&
    typeof secret === 'string' &&
    secret !== '';
  if (!usesSecret) return authenticateRequest(ctx, request);
  const headers = { ...request.headers, authorization: `Bearer ${secret}` };
  return authenticateRequest(ctx, Object.create(request, { headers: { value: headers } }) as FastifyRequest);
}

/** Enabled, with a key, of one of these types and not resting after failures. */
export function isTaskChannelUsable(
  ctx: RelayContext,
  channel: RelayChannel | undefined,
  types: readonly number[],
) {
  return (
    channel !== undefined &&
    channel.status === ChannelStatus.Enabled &&
    channel.key !== undefined &&
    types.includes(channel.type) &&
    !ctx.channels.cooldown.isCoolingDown(channel.id)
  );
}

/** The channel for a new task: the admin's forced one, else one serving the model in the caller's group. */
export function pickTaskChannel(
  ctx: RelayContext,
  caller: Caller,
  model: string,
  types: readonly number[],
): RelayChannel | RelayError {
  if (caller.forcedChannelId !== undefined) {
    const forced = ctx.channels.get(caller.forcedChannelId);
    return isTaskChannelUsable(ctx, forced, types)
      ? (forced as RelayChannel)
      : localError(503, 'channel_unavailable', `channel ${caller.forcedChannelId} is not available`);
  }
  const picked = pickChannel(ctx.channels.table, {
    group: caller.group,
    model,
    attempt: 0,
    tried: new Set(),
    isAvailable: (id) => isTaskChannelUsable(ctx, ctx.channels.get(id), types),
  });
  const channel = picked && ctx.channels.get(picked.channelId);
  if (channel) return channel;
  // No channel serves the task kind at all: bad input (404); channels that all rest: the gateway's trouble (503).
  return tiersFor(ctx.channels.table, caller.group, model).length === 0
    ? localError(404, 'model_not_found', `no channel serves ${model} in group ${caller.group}`)
    : localError(503, 'model_not_found', `no channel of ${model} is available in group ${caller.group} now`);
}

/**
 * A task's price, per call as billing resolves it for the caller's group (`resolvePricing`): the group's own
 * `GroupModelPrice` entry (GroupRatio not applied), else `ModelPrice[model]` × group ratio. A task has no tokens,
 * so where billing would price the model per token (a ratio, or no price at all) the task pays its per-call price
 * (`ModelPrice`, else the built-in one, else $0.1) × group ratio, as before group prices existed.
 */
export function taskPriceOf(
  ctx: RelayContext,
  model: string,
  group: string,
): { quota: number; modelPrice: number; groupRatio: number } {
  const { options } = ctx.deps;
  const tables = priceTablesOf((key) => options.get(key));
  const pricing = resolvePricing({ tables, model, group, selfUseMode: false, acceptUnsetModelRatio: false });
  const { modelPrice, groupRatio } =
    !isPricingRefusal(pricing) && pricing.kind === 'per-call'
      ? pricing
      : {
          modelPrice: lookupModelPrice(tables, model) ?? DEFAULT_MODEL_PRICE[model] ?? 0.1,
          groupRatio: lookupGroupRatio(tables, group),
        };
  return { quota: Math.trunc(modelPrice * groupRatio * options.get('QuotaPerUnit')), modelPrice, groupRatio };
}

export const payerOf = (ctx: RelayContext, caller: Caller): Payer => ({
  userId: caller.user.id,
  tokenId: caller.token.id,
  tokenUnlimited: caller.token.unlimitedQuota,
  windows: callerWindows(ctx.deps.options, caller, true),
  allowances: caller.user.subscriptions,
});

/** Holds a submit's price (nothing for a free one); the refusal says which balance is short. */
export async function holdTaskPrice(
  ctx: RelayContext,
  caller: Caller,
  quota: number,
): Promise<{ ok: true; hold: Hold } | { ok: false; error: RelayError }> {
  return holdQuota(ctx, payerOf(ctx, caller), quota);
}

export interface TaskCharge {
  readonly caller: Caller;
  readonly hold: Hold;
  readonly quota: number;
  readonly model: string;
  readonly modelPrice: number;
  readonly groupRatio: number;
  readonly channelId: number;
  readonly startedAt: number;
}

/**
 * Settles a submit: `accepted` charges the price (the debit and its consume log in one batched write), otherwise
 * the hold is released. Returns the quota charged.
 */
export async function settleTaskCharge(
  ctx: RelayContext,
  request: FastifyRequest,
  charge: TaskCharge,
  accepted: boolean,
): Promise<number> {
  const result = await ctx.ledger.settle(charge.hold, accepted ? charge.quota : 0, accepted);
  if (!accepted) return 0;
  const { caller } = charge;
  if (result.charged === 0) {
    // A free task is not logged, but it counts in the caller's requests windows.
    if (result.windows?.length)
      ctx.writer.add({
        userId: caller.user.id,
        tokenId: caller.token.id,
        channelId: charge.channelId,
        quota: 0,
        countRequest: false,
        log: undefined,
        windows: result.windows,
      });
    return 0;
  }
  const { options } = ctx.deps;
  ctx.writer.add({
    userId: caller.user.id,
    tokenId: caller.token.id,
    channelId: charge.channelId,
    quota: result.charged,
    countRequest: true,
    debit: {
      quota: result.charged,
      fromToken: !caller.token.unlimitedQuota,
      ...(drawsOnWallet(charge.hold) ? {} : { fromUser: false }),
    },
    windows: result.windows,
    log: options.get('LogConsumeEnabled')
      ? {
          userId: caller.user.id,
          createdAt: Math.floor(Date.now() / 1000),
          type: LogType.Consume,
          content: `model price ${charge.modelPrice.toFixed(2)}, group ratio ${charge.groupRatio.toFixed(2)}, task submitted`,
          username: caller.user.username,
          tokenName: caller.token.name,
          modelName: charge.model,
          quota: result.charged,
          promptTokens: 0,
          completionTokens: 0,
          useTime: Math.round((performance.now() - charge.startedAt) / 1000),
          isStream: false,
          channelId: charge.channelId,
          tokenId: caller.token.id,
          group: caller.group,
          ip: request.ip,
          requestId: request.id,
          other: JSON.stringify({ model_price: charge.modelPrice, group_ratio: charge.groupRatio }),
        }
      : undefined,
  });
  return result.charged;
}

/** POSTs JSON to a task upstream; the answer's status and parsed body (undefined when not JSON). */
export async function postJson(
  url: string,
  headers: Record<string, string>,
  body: unknown,
  timeoutMs: number,
  /** The channel's outbound proxy (`ctx.upstream.dispatcherFor(channel.proxy)`). */
  dispatcher: Dispatcher,
): Promise<{ status: number; body: unknown }> {
  const response = await fetch(url, {
    dispatcher,
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await response.text();
  try {
    return { status: response.status, body: JSON.parse(text) as unknown };
  } catch {
    return { status: response.status, body: undefined };
  }
}

/** The channel's base URL without a trailing slash. */
export const baseOf = (channel: RelayChannel): string => channel.baseUrl.replace(/\/+$/, '');

/** A task id a client may name: what the id columns hold (up to 191 characters, no control characters). */
export const isTaskId = (value: unknown): value is string =>
  typeof value === 'string' &&
  value.length > 0 &&
  value.length <= 191 &&
  [...value].every((char) => char.charCodeAt(0) >= 0x20);

/** Text as Postgres stores it: NUL characters cannot be kept in text or jsonb, so they are dropped. */
export const storableText = (value: string): string => value.replaceAll(String.fromCharCode(0), '');

/** A JSON value with NUL characters dropped from every string (jsonb refuses them). */
export function storableJson(value: unknown): unknown {
  if (typeof value === 'string') return storableText(value);
  if (Array.isArray(value)) return value.map(storableJson);
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(
      Object.entries(value).map(([key, inner]) => [storableText(key), storableJson(inner)]),
    );
  return value;
}

/** Counts a submit that reached its upstream in the relay's call metrics (quota spent, latency, status). */
export function recordTaskCall(
  ctx: RelayContext,
  request: FastifyRequest,
  charge: TaskCharge,
  call: { status: number; quota: number; upstreamMs: number; provider: string },
): void {
  ctx.metrics.recordCall({
    route: request.routeOptions.url ?? request.url,
    model: charge.model,
    requestId: request.id,
    provider: call.provider,
    channelId: charge.channelId,
    status: call.status,
    isStream: false,
    totalMs: performance.now() - charge.startedAt,
    upstreamMs: call.upstreamMs,
    frtMs: undefined,
    promptTokens: 0,
    completionTokens: 0,
    quota: call.quota,
  });
}

/** Charges a submit the upstream accepted and counts it in the call metrics. */
export async function chargeAccepted(
  ctx: RelayContext,
  request: FastifyRequest,
  charge: TaskCharge,
  call: { upstreamMs: number; provider: string },
): Promise<void> {
  const charged = await settleTaskCharge(ctx, request, charge, true);
  recordTaskCall(ctx, request, charge, { status: 200, quota: charged, ...call });
}
