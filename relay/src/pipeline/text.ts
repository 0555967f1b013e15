/**
 * `POST /v1/chat/completions` and `POST /v1/embeddings` to OpenAI-compatible channels (reference §4.1–4.4):
 * authenticate → price → reserve → attempts over channels (retries walk down the tiers, a tried channel is
 * never picked again) → pipe the answer → settle → log. The reservation is settled exactly once on every path:
 * success, upstream error, client disconnect, exception.
 *
 * The charged quota is returned in the `x-turnpike-quota` header; for a stream the head is sent before the bill
 * is known, so it comes as the SSE comment `: x-turnpike-quota: <n>` just before `data: [DONE]` (comments are
 * ignored by every SSE client, the official SDKs included, and no HTTP trailer survives common proxies).
 */
import { decideReservation, estimateQuota } from '@turnpike/core/billing/pre-consume';
import { isPricingRefusal, type Pricing, resolvePricing } from '@turnpike/core/billing/ratios';
import { settleTokens } from '@turnpike/core/billing/settle';
import { LogType } from '@turnpike/core/domain/logs';
import { isRoot } from '@turnpike/core/domain/users';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { adapterFor, type TextEndpoint } from '../adapters/registry.ts';
import {
  localError,
  mapStatusCode,
  parseUpstreamError,
  type RelayError,
  SATURATED_MESSAGE,
  shouldRetry,
  toOpenAiErrorBody,
} from '../errors.ts';
import {
  countChatPromptTokens,
  countInputTokens,
  countTextTokens,
  createTokenCounter,
  encodingForModel,
} from '../metering/tokens.ts';
import {
  EMPTY_USAGE,
  hasUsage,
  type NormalisedUsage,
  normaliseOpenAiUsage,
  toOpenAiUsage,
} from '../metering/usage.ts';
import { pickChannel } from '../routing/pick.ts';
import { createSseParser, DONE } from '../sse.ts';
import type { RelayChannel } from '../state/channel-cache.ts';
import { toUpstreamFailure, type UpstreamResponse } from '../upstream/client.ts';
import { type Caller, checkModelAllowed } from './authenticate.ts';
import { authenticateRequest } from './authenticate-request.ts';
import { type Payer, reserveQuota, settleQuota } from './billing.ts';
import { checkChannelHealth } from './channel-health.ts';
import { QUOTA_HEADER, type RelayContext } from './context.ts';

export type { TextEndpoint };

const MAX_TOKENS_LIMIT = 2 ** 30;

type Json = Record<string, unknown>;
const isRecord = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Sends a relay error in OpenAI's shape (final 429s get the neutral "saturated" text, reference §4.2). */
export function sendError(request: FastifyRequest, reply: FastifyReply, error: RelayError): FastifyReply {
  const shown = error.status === 429 && !error.isLocal ? { ...error, message: SATURATED_MESSAGE } : error;
  return reply
    .code(error.status)
    .header('content-type', 'application/json')
    .send(toOpenAiErrorBody(shown, request.id));
}

const invalid = (message: string) => localError(400, 'invalid_request', message, 'invalid_request_error');

/** Validates the body as far as the gateway needs it (reference §4.3 step 2). */
function validate(endpoint: TextEndpoint, body: unknown): { body: Json; model: string } | RelayError {
  if (!isRecord(body)) return invalid('the request body must be a JSON object');
  const { model } = body;
  if (typeof model !== 'string' || model.trim() === '') return invalid('model is required');
  if (endpoint === 'chat' && (!Array.isArray(body.messages) || body.messages.length === 0))
    return invalid('messages is required and must be a non-empty list');
  if (endpoint === 'embeddings' && body.input === undefined) return invalid('input is required');
  for (const field of ['max_tokens', 'max_completion_tokens'] as const) {
    const value = body[field];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_TOKENS_LIMIT)
      return invalid(`${field} must be a whole number between 0 and ${MAX_TOKENS_LIMIT}`);
  }
  return { body, model };
}

function maxTokensOf(body: Json): number | undefined {
  const values = [body.max_tokens, body.max_completion_tokens].filter(
    (v): v is number => typeof v === 'number' && v > 0,
  );
  return values.length === 0 ? undefined : Math.max(...values);
}

/** Per-request bookkeeping shared by the attempt loop and the settlement. */
interface Billing {
  readonly payer: Payer;
  readonly pricing: Pricing;
  readonly reserved: number;
  settled: boolean;
}

/** The one place a reservation is turned into a charge; idempotent per request. */
async function settle(
  ctx: RelayContext,
  request: FastifyRequest,
  caller: Caller,
  billing: Billing,
  outcome:
    | {
        usage: NormalisedUsage | undefined;
        channelId: number;
        usedChannels: readonly number[];
        upstreamModel: string;
        isStream: boolean;
        frtMs: number | undefined;
        startedAt: number;
      }
    | undefined,
): Promise<number> {
  if (billing.settled) return 0;
  billing.settled = true;
  const { options } = ctx.deps;
  const quotaPerUnit = options.get('QuotaPerUnit');
  const settlement =
    outcome?.usage === undefined
      ? { quota: 0, isEmpty: true, isMinimumApplied: false }
      : settleTokens(billing.pricing, outcome.usage, quotaPerUnit);
  const result = await settleQuota(ctx.deps.db, billing.payer, billing.reserved, settlement.quota);
  ctx.auth.setBalances(caller.user.id, result.userQuota, caller.token.id, result.tokenQuota);
  if (outcome === undefined) return 0;
  const { pricing } = billing;
  const usage = outcome.usage ?? EMPTY_USAGE;
  const other: Json = {
    model_ratio: pricing.kind === 'per-token' ? pricing.modelRatio : 0,
    group_ratio: pricing.groupRatio,
    completion_ratio: pricing.kind === 'per-token' ? pricing.completionRatio : 0,
    cache_tokens: usage.cachedTokens,
    cache_ratio: pricing.kind === 'per-token' ? pricing.cacheRatio : 0,
    model_price: pricing.kind === 'per-call' ? pricing.modelPrice : -1,
    frt: outcome.frtMs ?? -1000,
    admin_info: { use_channel: outcome.usedChannels.map(String) },
  };
  if (usage.cacheWriteTokens > 0 && pricing.kind === 'per-token') {
    other.cache_creation_tokens = usage.cacheWriteTokens;
    other.cache_creation_ratio = pricing.cacheCreationRatio;
  }
  if (outcome.upstreamModel !== pricing.model) {
    other.is_model_mapped = true;
    other.upstream_model_name = outcome.upstreamModel;
  }
  if (result.shortfall > 0) other.shortfall = result.shortfall;
  if (usage.source === 'counted') other.usage_counted = true;
  let content =
    pricing.kind === 'per-token'
      ? `model ratio ${pricing.modelRatio.toFixed(2)}, completion ratio ${pricing.completionRatio.toFixed(2)}, group ratio ${pricing.groupRatio.toFixed(2)}`
      : `model price ${pricing.modelPrice.toFixed(2)}, group ratio ${pricing.groupRatio.toFixed(2)}`;
  if (settlement.isEmpty) content += ' (the upstream reported no tokens: possibly a timeout)';
  const logEnabled = options.get('LogConsumeEnabled');
  ctx.writer.add({
    userId: caller.user.id,
    tokenId: caller.token.id,
    channelId: outcome.channelId,
    quota: result.charged,
    countRequest: !settlement.isEmpty,
    log: logEnabled
      ? {
          userId: caller.user.id,
          createdAt: Math.floor(Date.now() / 1000),
          type: LogType.Consume,
          content,
          username: caller.user.username,
          tokenName: caller.token.name,
          modelName: pricing.model,
          quota: result.charged,
          promptTokens: usage.promptTokens,
          completionTokens: usage.completionTokens,
          useTime: Math.round((performance.now() - outcome.startedAt) / 1000),
          isStream: outcome.isStream,
          channelId: outcome.channelId,
          tokenId: caller.token.id,
          group: caller.group,
          ip: request.ip,
          requestId: request.id,
          other: JSON.stringify(other),
        }
      : undefined,
  });
  return result.charged;
}

/** Text of a non-stream chat answer, for counting when the upstream reported no usage. */
function answerText(answer: Json): string {
  const parts: string[] = [];
  const choices = Array.isArray(answer.choices) ? answer.choices : [];
  for (const choice of choices) {
    const message = isRecord(choice) ? choice.message : undefined;
    if (!isRecord(message)) continue;
    if (typeof message.content === 'string') parts.push(message.content);
    if (typeof message.reasoning_content === 'string') parts.push(message.reasoning_content);
    if (Array.isArray(message.tool_calls)) {
      for (const call of message.tool_calls) {
        const fn = isRecord(call) ? call.function : undefined;
        if (isRecord(fn)) parts.push(`${fn.name ?? ''}${fn.arguments ?? ''}`);
      }
    }
  }
  return parts.join('');
}

export async function handleText(
  ctx: RelayContext,
  endpoint: TextEndpoint,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply | undefined> {
  const startedAt = performance.now();
  const { options } = ctx.deps;
  const auth = await authenticateRequest(ctx, request);
  if (!auth.ok) return sendError(request, reply, auth.error);
  const { caller } = auth;
  const checked = validate(endpoint, request.body);
  if ('status' in checked) return sendError(request, reply, checked);
  const { body, model } = checked;
  const refused = checkModelAllowed(caller, model);
  if (refused) return sendError(request, reply, refused);

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

  const promptTokens =
    endpoint === 'chat'
      ? countChatPromptTokens(
          model,
          body.messages as never[],
          Array.isArray(body.tools) ? (body.tools as unknown[]) : [],
        )
      : countInputTokens(model, body.input);
  const quotaPerUnit = options.get('QuotaPerUnit');
  const estimate = estimateQuota({
    pricing,
    promptTokens,
    maxTokens: maxTokensOf(body),
    preConsumedTokens: options.get('PreConsumedQuota'),
    quotaPerUnit,
  });
  const decision = decideReservation({
    estimate,
    userQuota: caller.user.quota,
    token: { unlimited: caller.token.unlimitedQuota, remainQuota: caller.token.remainQuota },
    trustQuota: 10 * quotaPerUnit,
  });
  if (!decision.ok) return sendError(request, reply, localError(403, decision.code, decision.message));
  const payer: Payer = {
    userId: caller.user.id,
    tokenId: caller.token.id,
    tokenUnlimited: caller.token.unlimitedQuota,
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
  const billing: Billing = { payer, pricing, reserved: decision.reserve, settled: false };

  // A client that goes away cancels the upstream request; the bill covers what was produced until then.
  const clientGone = new AbortController();
  reply.raw.on('close', () => {
    if (!reply.raw.writableFinished) clientGone.abort();
  });

  // The refund happens before the error is sent, so a client that checks its balance after a failure sees it.
  let failure: RelayError | undefined;
  try {
    failure = await runAttempts(ctx, endpoint, request, reply, {
      caller,
      body,
      model,
      promptTokens,
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

interface AttemptInput {
  readonly caller: Caller;
  readonly body: Json;
  readonly model: string;
  readonly promptTokens: number;
  readonly billing: Billing;
  readonly clientGone: AbortController;
  readonly startedAt: number;
}

function upstreamBody(channel: RelayChannel, body: Json, upstreamModel: string, isStream: boolean): string {
  const payload: Json = { ...body, model: upstreamModel };
  if (isStream) {
    // Usage is always asked for upstream (billing needs it); the client sees the usage chunk only if it asked.
    const streamOptions = isRecord(body.stream_options) ? body.stream_options : {};
    payload.stream_options = { ...streamOptions, include_usage: true };
  } else {
    delete payload.stream_options;
  }
  if (channel.paramOverride) Object.assign(payload, channel.paramOverride);
  return JSON.stringify(payload);
}

async function runAttempts(
  ctx: RelayContext,
  endpoint: TextEndpoint,
  request: FastifyRequest,
  reply: FastifyReply,
  input: AttemptInput,
): Promise<RelayError | undefined> {
  const { caller, body, model } = input;
  const isStream = endpoint === 'chat' && body.stream === true;
  const retryTimes = ctx.deps.options.get('RetryTimes');
  const tried = new Set<number>();
  const used: number[] = [];
  let lastError: RelayError | undefined;

  for (let attempt = 0; attempt <= retryTimes; attempt += 1) {
    let channelId: number;
    if (caller.forcedChannelId !== undefined) {
      if (attempt > 0) break;
      if (!ctx.channels.isAvailable(caller.forcedChannelId))
        return localError(403, 'channel_unavailable', 'the chosen channel does not exist or is disabled');
      channelId = caller.forcedChannelId;
    } else {
      const pick = pickChannel(ctx.channels.table, {
        group: caller.group,
        model,
        attempt,
        tried,
        isAvailable: ctx.channels.isAvailable,
      });
      if (!pick) break;
      channelId = pick.channelId;
    }
    const channel = ctx.channels.get(channelId);
    if (!channel || channel.key === undefined) break;
    tried.add(channelId);
    used.push(channelId);
    const upstreamModel = channel.modelMapping[model] ?? model;
    const adapter = adapterFor(channel.type);
    if (!adapter) break;
    const retryContext = {
      remaining: retryTimes - attempt,
      isForcedChannel: caller.forcedChannelId !== undefined,
    };

    let response: UpstreamResponse;
    try {
      response = await ctx.upstream.request({
        url: adapter.url(channel, endpoint),
        headers: adapter.headers(channel),
        body: upstreamBody(channel, body, upstreamModel, isStream),
        signal: input.clientGone.signal,
      });
    } catch (error) {
      const failure = toUpstreamFailure(error);
      if (failure.kind === 'aborted') return undefined; // the client left; the finally block refunds
      lastError = {
        status: failure.kind === 'timeout' ? 504 : 502,
        message: failure.message,
        type: 'upstream_error',
        code: 'do_request_failed',
        param: null,
        isLocal: false,
      };
      request.log.warn({ channelId, kind: failure.kind }, 'upstream request failed');
      if (shouldRetry(failure.kind === 'connect' ? 'connect-error' : lastError, retryContext)) continue;
      break;
    }

    if (response.status !== 200) {
      const text = await response.readText().catch(() => '');
      const parsed = parseUpstreamError(response.status, text);
      checkChannelHealth(ctx, channel, parsed);
      lastError = {
        ...parsed,
        status: mapStatusCode(response.status, channel.statusCodeMapping ?? undefined),
      };
      request.log.warn(
        { channelId, status: response.status, code: parsed.code },
        'upstream answered an error',
      );
      if (shouldRetry(parsed, retryContext)) continue;
      break;
    }

    const outcome = { channelId, usedChannels: used, upstreamModel, startedAt: input.startedAt };
    if (isStream) {
      await pipeStream(ctx, request, reply, input, response, outcome);
      return undefined;
    }
    return sendAnswer(ctx, endpoint, request, reply, input, response, outcome);
  }

  return (
    lastError ??
    localError(503, 'model_not_found', `no channel is available for model ${model} in group ${caller.group}`)
  );
}

interface Outcome {
  readonly channelId: number;
  readonly usedChannels: readonly number[];
  readonly upstreamModel: string;
  readonly startedAt: number;
}

const ANSWER_LIMIT = 64 * 1024 * 1024;

async function sendAnswer(
  ctx: RelayContext,
  endpoint: TextEndpoint,
  request: FastifyRequest,
  reply: FastifyReply,
  input: AttemptInput,
  response: UpstreamResponse,
  outcome: Outcome,
): Promise<RelayError | undefined> {
  let text: string;
  try {
    text = await response.readText(ANSWER_LIMIT);
  } catch (error) {
    if (toUpstreamFailure(error).kind === 'aborted') return undefined;
    return upstreamFault('the upstream answer was cut off', 'bad_response');
  }
  const frtMs = performance.now() - outcome.startedAt;
  let answer: unknown;
  try {
    answer = JSON.parse(text);
  } catch {
    answer = undefined;
  }
  if (!isRecord(answer)) return upstreamFault('the upstream answer is not JSON', 'bad_response_body');
  let usage = normaliseOpenAiUsage(answer.usage);
  if (!hasUsage(usage)) {
    const completion =
      endpoint === 'chat' ? countTextTokens(answerText(answer), encodingForModel(input.model)) : 0;
    usage = {
      ...EMPTY_USAGE,
      promptTokens: input.promptTokens,
      completionTokens: completion,
      source: 'counted',
    };
  }
  const charged = await settle(ctx, request, input.caller, input.billing, {
    ...outcome,
    usage,
    isStream: false,
    frtMs,
  });
  reply.code(200).header('content-type', 'application/json').header(QUOTA_HEADER, String(charged)).send(text);
  return undefined;
}

const upstreamFault = (message: string, code: string): RelayError => ({
  status: 502,
  message,
  type: 'upstream_error',
  code,
  param: null,
  isLocal: false,
});

/** Streams chunk by chunk; memory is one SSE event plus the incremental token counter. */
async function pipeStream(
  ctx: RelayContext,
  request: FastifyRequest,
  reply: FastifyReply,
  input: AttemptInput,
  response: UpstreamResponse,
  outcome: Outcome,
): Promise<void> {
  const clientAskedUsage =
    isRecord(input.body.stream_options) && input.body.stream_options.include_usage === true;
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
    'x-request-id': request.id,
  });
  const write = async (text: string) => {
    if (raw.destroyed || raw.writableEnded) return;
    if (!raw.write(text)) {
      await new Promise<void>((resolve) => {
        const done = () => {
          raw.off('drain', done);
          raw.off('close', done);
          resolve();
        };
        raw.on('drain', done);
        raw.on('close', done);
      });
    }
  };

  const parser = createSseParser();
  const counter = createTokenCounter(input.model);
  let upstreamUsage: NormalisedUsage | undefined;
  let frtMs: number | undefined;
  let last: { id?: unknown; created?: unknown; model?: unknown } = {};

  const handle = async (data: string) => {
    if (data === DONE) return;
    frtMs ??= performance.now() - outcome.startedAt;
    let chunk: unknown;
    try {
      chunk = JSON.parse(data);
    } catch {
      await write(`data: ${data}\n\n`);
      return;
    }
    if (!isRecord(chunk)) {
      await write(`data: ${data}\n\n`);
      return;
    }
    last = chunk;
    const choices = Array.isArray(chunk.choices) ? chunk.choices : [];
    for (const choice of choices) {
      const delta = isRecord(choice) ? choice.delta : undefined;
      if (!isRecord(delta)) continue;
      if (typeof delta.content === 'string') counter.push(delta.content);
      if (typeof delta.reasoning_content === 'string') counter.push(delta.reasoning_content);
      if (Array.isArray(delta.tool_calls)) {
        for (const call of delta.tool_calls) {
          const fn = isRecord(call) ? call.function : undefined;
          if (isRecord(fn)) counter.push(`${fn.name ?? ''}${fn.arguments ?? ''}`);
        }
      }
    }
    const usage = normaliseOpenAiUsage(chunk.usage);
    if (hasUsage(usage)) upstreamUsage = usage;
    if (clientAskedUsage || !('usage' in chunk)) {
      await write(`data: ${data}\n\n`);
      return;
    }
    // The client did not ask for usage: the usage-only chunk is dropped, and `usage: null` fields removed.
    if (choices.length === 0 && chunk.usage !== null) return;
    const { usage: _hidden, ...visible } = chunk;
    await write(`data: ${JSON.stringify(visible)}\n\n`);
  };

  let cutOff = false;
  try {
    for await (const piece of response.body) {
      for (const event of parser.push(piece)) await handle(event.data);
    }
    for (const event of parser.end()) await handle(event.data);
  } catch (error) {
    const failure = toUpstreamFailure(error);
    cutOff = true;
    if (failure.kind !== 'aborted')
      request.log.warn({ channelId: outcome.channelId, kind: failure.kind }, 'upstream stream broke');
  }

  const usage: NormalisedUsage = hasUsage(upstreamUsage)
    ? upstreamUsage
    : {
        ...EMPTY_USAGE,
        promptTokens: input.promptTokens,
        completionTokens: counter.total(),
        source: 'counted',
      };
  const clientThere = !input.clientGone.signal.aborted;
  if (clientThere && clientAskedUsage && upstreamUsage === undefined) {
    const synthetic = {
      id: last.id ?? `chatcmpl-${request.id}`,
      object: 'chat.completion.chunk',
      created: last.created ?? Math.floor(Date.now() / 1000),
      model: last.model ?? outcome.upstreamModel,
      choices: [],
      usage: toOpenAiUsage(usage),
    };
    await write(`data: ${JSON.stringify(synthetic)}\n\n`);
  }
  let charged = 0;
  try {
    charged = await settle(ctx, request, input.caller, input.billing, {
      ...outcome,
      usage,
      isStream: true,
      frtMs,
    });
  } finally {
    if (clientThere) {
      await write(`: ${QUOTA_HEADER}: ${charged}\n\n`);
      await write(`data: ${DONE}\n\n`);
    }
    if (!raw.writableEnded) raw.end();
  }
  if (cutOff)
    request.log.info({ channelId: outcome.channelId }, 'stream ended early; billed what was produced');
}
