/**
 * Attempts over channels (reference §4.2): pick a channel (retries walk down the priority tiers and never pick a
 * tried channel again), let its provider build the upstream request, send it, and on a 200 hand the answer to the
 * endpoint's relay step. Returns the error to answer with, or undefined when the answer was sent (or the client
 * left). Never settles on failure: the caller refunds whatever is left unsettled.
 *
 * The seam of formats and providers (docs/adr/0018, 0024): when the channel's format is the client's the request
 * goes up as the client sent it and the answer comes back unread; otherwise the request goes through the canonical
 * chat shape (the ingress reads it, the format writes it) and the answer back. A channel whose provider can serve
 * the endpoint neither way is skipped. Upstream error text is shown and logged with the channel's credentials removed.
 *
 * Optional retry rules (off by default): `FirstTokenTimeoutSeconds` gives up on a stream whose first output has
 * not arrived in time, and `RetryEmptyResponseEnabled` treats a 200 with no output and no usage as a failure;
 * both go on to the next channel with the reservation kept, like an upstream 5xx.
 */

import { type AttemptFailure, localError, mapStatusCode, type RelayError, shouldRetry } from '../errors.ts';
import { type ChatRequest, keepHostedTools } from '../formats/canonical.ts';
import type { Endpoint, UpstreamCall } from '../formats/format.ts';
import type { Ingress } from '../formats/ingress.ts';
import { openAiChatIngress } from '../formats/openai/chat-ingress.ts';
import { admitChannelLimits } from '../limits/admit.ts';
import { markAttempt } from '../metrics/tracing.ts';
import { CredentialError } from '../providers/provider.ts';
import { type Provider, providerFor } from '../providers/registry.ts';
import { affinityOf } from '../routing/affinity.ts';
import { pickChannel } from '../routing/pick.ts';
import { abortedWith, toUpstreamFailure, type UpstreamResponse } from '../upstream/client.ts';
import { redactorOf } from '../upstream/redact.ts';
import { relayBinary, relayJson, relayTranscription } from './answer.ts';
import type { Caller } from './authenticate.ts';
import { checkChannelHealth } from './channel-health.ts';
import type { RelayContext } from './context.ts';
import type { EndpointSpec, PreparedRequest } from './endpoints/spec.ts';
import type { RelayReply, RelayRequest } from './exchange.ts';
import { completionCheckOf } from './sensitive-words.ts';
import type { Billing } from './settle.ts';
import { pipeStream, type StreamReading } from './stream.ts';

/** The response header naming the client's hosted tools left out of the upstream request (docs/adr/0029). */
const DROPPED_TOOLS_HEADER = 'x-turnpike-dropped-tools';

/** How one attempt talks to its channel: the client's own format, or through the canonical chat shape. */
interface Route {
  readonly endpoint: Endpoint;
  readonly converted: boolean;
}

/**
 * The route to `provider` for the spec, or undefined when it can serve the endpoint neither way. Pass-through is
 * "client format == channel format"; the provider decides only whether it carries the endpoint.
 */
function routeOf(spec: EndpointSpec, ingress: Ingress, provider: Provider): Route | undefined {
  if (provider.format.id === ingress.format && provider.supports(spec.endpoint))
    return { endpoint: spec.endpoint, converted: false };
  if (spec.canonical !== undefined && provider.supports(spec.canonical))
    return { endpoint: spec.canonical, converted: true };
  return undefined;
}

export interface AttemptInput {
  readonly caller: Caller;
  readonly prepared: PreparedRequest;
  readonly billing: Billing;
  readonly clientGone: AbortController;
  readonly startedAt: number;
}

const failureError = (reason: AttemptFailure, seconds: number): RelayError =>
  reason === 'first-token-timeout'
    ? {
        status: 504,
        message: `the upstream sent no first token within ${seconds} s`,
        type: 'upstream_error',
        code: 'first_token_timeout',
        param: null,
        isLocal: false,
      }
    : {
        status: 502,
        message: 'the upstream answered with an empty response',
        type: 'upstream_error',
        code: 'empty_response',
        param: null,
        isLocal: false,
      };

export async function runAttempts(
  ctx: RelayContext,
  spec: EndpointSpec,
  request: RelayRequest,
  reply: RelayReply,
  input: AttemptInput,
): Promise<RelayError | undefined> {
  const { caller, prepared } = input;
  const { model } = prepared;
  const { options } = ctx.deps;
  const isStream = prepared.isStream && spec.stream !== undefined;
  const retryTimes = options.get('RetryTimes');
  const firstTokenSeconds = isStream ? options.get('FirstTokenTimeoutSeconds') : 0;
  const retryEmptyEnabled = options.get('RetryEmptyResponseEnabled');
  const streamTimeoutSeconds = options.get('StreamingTimeoutSeconds');
  const pingMs = options.get('general_setting.ping_interval_enabled')
    ? options.get('general_setting.ping_interval_seconds') * 1000
    : 0;
  const completionCheck = completionCheckOf(ctx);
  const ingress = spec.ingress ?? openAiChatIngress;
  const passThrough = options.get('global.pass_through_request_enabled');
  let chat: ChatRequest | undefined;
  /** The request in the canonical shape, read once for every converted attempt. */
  const canonical = (): ChatRequest => {
    chat ??= ingress.toChat(prepared.payload.kind === 'json' ? prepared.payload.body : {}, model, isStream);
    return chat;
  };
  let refusedConversion: RelayError | null | undefined;
  const refusal = (): RelayError | undefined => {
    refusedConversion ??=
      ingress.refuseConversion?.(prepared.payload.kind === 'json' ? prepared.payload.body : {}) ?? null;
    return refusedConversion ?? undefined;
  };
  const tried = new Set<number>();
  const used: number[] = [];
  // Session affinity (docs/adr/0027): the session's bound channel and key first, when they can serve now.
  const affinity =
    caller.forcedChannelId === undefined
      ? await affinityOf(ctx, request, prepared.payload.kind === 'json' ? prepared.payload.body : undefined, {
          tokenId: caller.token.id,
          group: caller.group,
          model,
        })
      : undefined;
  let lastError: RelayError | undefined;
  let upstreamMsBefore = 0;

  for (let attempt = 0; attempt <= retryTimes; attempt += 1) {
    let channelId: number;
    if (caller.forcedChannelId !== undefined) {
      if (attempt > 0) break;
      if (!ctx.channels.isAvailable(caller.forcedChannelId))
        return localError(403, 'channel_unavailable', 'the chosen channel does not exist or is disabled');
      channelId = caller.forcedChannelId;
    } else {
      const bound = affinity?.preferred;
      const pick =
        bound && !tried.has(bound.channelId) && ctx.channels.isAvailable(bound.channelId)
          ? { channelId: bound.channelId }
          : pickChannel(ctx.channels.table, {
              group: caller.group,
              model,
              attempt,
              tried,
              isAvailable: ctx.channels.isAvailable,
            });
      if (!pick) break;
      channelId = pick.channelId;
    }
    tried.add(channelId);
    // A multi-key channel lends one usable key to this attempt (docs/adr/0027).
    const channel = ctx.channels.withKey(channelId, affinity?.preferred?.key);
    if (!channel || channel.key === undefined) break;
    /** A failure that was one key's alone leaves the channel to be tried again with another key. */
    const checkHealth = (error: RelayError) => {
      if (checkChannelHealth(ctx, channel, error) && ctx.channels.isAvailable(channelId))
        tried.delete(channelId);
    };
    const upstreamModel = channel.modelMapping[model] ?? model;
    const provider = providerFor(channel.type, upstreamModel);
    const route = provider && routeOf(spec, ingress, provider);
    if (provider && !route && spec.countLocally) {
      // Counting tokens needs no upstream: a channel of another format is answered from the relay's own count.
      reply.code(200).header('content-type', 'application/json').send(spec.countLocally(prepared));
      return undefined;
    }
    // A request that cannot be converted (ingress.refuseConversion) skips the channels it would need it for.
    const refused = route?.converted ? refusal() : undefined;
    if (refused) lastError = refused;
    if (!provider || !route || refused) {
      // Another channel of the model may speak a format this endpoint can use; this one does not count.
      if (caller.forcedChannelId !== undefined) break;
      attempt -= 1;
      continue;
    }
    // A channel at its own limit is passed over like one that cannot serve (docs/adr/0028).
    const channelLimit = await admitChannelLimits(ctx, request, channel, prepared);
    if (!channelLimit.ok) {
      lastError = channelLimit.error;
      if (caller.forcedChannelId !== undefined) break;
      attempt -= 1;
      continue;
    }
    const channelTicket = channelLimit.ticket;
    if (channelTicket) input.billing.limits?.push(channelTicket);
    used.push(channelId);
    const redactor = redactorOf(channel);
    const retryContext = {
      remaining: retryTimes - attempt,
      isForcedChannel: caller.forcedChannelId !== undefined,
      isAnthropicChannel: provider.retriesBadRequest,
      retryEmptyAndSlow: true,
    };
    const mayRetryEmpty = retryEmptyEnabled && shouldRetry('empty-response', retryContext);
    // Hosted tools the channel's format has no equivalent of are left out, and the client told (docs/adr/0029).
    const hosted = route.converted
      ? keepHostedTools(canonical(), provider.format.hostedTools)
      : { chat: undefined, dropped: [] };
    if (hosted.dropped.length > 0) reply.header(DROPPED_TOOLS_HEADER, hosted.dropped.join(', '));
    else reply.removeHeader(DROPPED_TOOLS_HEADER);

    // The first-token timer covers the wait for the response head too; it aborts this attempt only (without one,
    // the attempt ends when the client leaves, and its controller serves).
    const attemptAbort = firstTokenSeconds > 0 ? abortedWith(input.clientGone.signal) : input.clientGone;
    let firstTokenTimedOut = false;
    const firstTokenTimer =
      firstTokenSeconds > 0
        ? setTimeout(() => {
            firstTokenTimedOut = true;
            attemptAbort.abort();
          }, firstTokenSeconds * 1000)
        : undefined;
    const retryOrStop = (reason: AttemptFailure): 'retry' | RelayError => {
      lastError = failureError(reason, firstTokenSeconds);
      checkHealth(lastError);
      request.log.warn({ channelId, reason }, 'upstream attempt failed');
      return shouldRetry(reason, retryContext) ? 'retry' : lastError;
    };

    let call: UpstreamCall | undefined;
    let answered = false;
    const upstreamSentAt = performance.now();
    try {
      let response: UpstreamResponse;
      try {
        call = await provider.buildRequest(channel, {
          endpoint: route.endpoint,
          payload: hosted.chat ? { kind: 'json', body: hosted.chat } : prepared.payload,
          upstreamModel,
          isStream,
          options,
          clientHeaders: route.converted ? undefined : prepared.clientHeaders,
          passThrough: !route.converted && passThrough,
        });
        response = await ctx.upstream.request({
          ...call,
          proxy: channel.proxy,
          signal: attemptAbort.signal,
          ...(isStream ? { bodyTimeoutMs: streamTimeoutSeconds * 1000 } : {}),
        });
      } catch (error) {
        if (firstTokenTimedOut && !input.clientGone.signal.aborted) {
          const next = retryOrStop('first-token-timeout');
          if (next === 'retry') continue;
          return next;
        }
        const failure = toUpstreamFailure(error);
        if (error instanceof CredentialError) {
          // No credential to send (a refused token exchange, a key that does not parse): as if answered so.
          lastError = { ...error.error, message: redactor.redact(error.error.message) };
          checkHealth(lastError);
          request.log.warn({ channelId, code: lastError.code }, 'upstream credential failed');
          if (shouldRetry(lastError, retryContext)) continue;
          break;
        }
        if (failure.kind === 'aborted') return undefined; // the client left; the caller refunds
        lastError = {
          status: failure.kind === 'timeout' ? 504 : 502,
          message: failure.message,
          type: 'upstream_error',
          code: 'do_request_failed',
          param: null,
          isLocal: false,
        };
        checkHealth(lastError);
        request.log.warn({ channelId, kind: failure.kind }, 'upstream request failed');
        if (shouldRetry(failure.kind === 'connect' ? 'connect-error' : lastError, retryContext)) continue;
        break;
      }

      // A provider that reports errors inside a 200 (Wenxin) says which status the answer stands for.
      if (response.status === 200 && !isStream && provider.checkAnswer)
        response = await provider.checkAnswer(response);
      if (response.status !== 200) {
        const text = await response.readText().catch(() => '');
        const read = provider.readError(response.status, text, response.headers);
        const parsed = { ...read, message: redactor.redact(read.message) };
        checkHealth(parsed);
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

      affinity?.served(channelId, channel.keyFingerprint);
      const outcome = {
        channelId,
        usedChannels: used,
        upstreamModel,
        startedAt: input.startedAt,
        upstreamSentAt,
        upstreamMsBefore,
        ...(hosted.dropped.length > 0 ? { other: { dropped_tools: hosted.dropped } } : {}),
      };
      const answerInput = { caller, prepared, billing: input.billing };
      const { format } = provider;
      const conversion = route.converted ? { format, ingress } : undefined;
      if (isStream && spec.stream) {
        const reading: StreamReading =
          format.id === 'openai' && !route.converted
            ? { kind: spec.stream === 'responses' ? 'responses' : 'chat' }
            : {
                kind: 'decoded',
                decoder: format.streamToChat(upstreamModel),
                // A sensitive-word check rewrites text: the stream then goes through the canonical shape.
                passUnread: !route.converted && completionCheck === undefined,
              };
        const body = prepared.payload.kind === 'json' ? prepared.payload.body : {};
        const result = await pipeStream(
          ctx,
          request,
          reply,
          {
            caller,
            body,
            model,
            get promptTokens() {
              return prepared.promptTokens;
            },
            billing: input.billing,
            clientGone: input.clientGone.signal,
          },
          provider.reframeStream ? { ...response, body: provider.reframeStream(response.body) } : response,
          outcome,
          {
            reading,
            encoder: ingress.streamEncoder(body, model, request.id, request.url),
            redactor,
            holdHead: firstTokenSeconds > 0 || mayRetryEmpty,
            retryEmpty: mayRetryEmpty,
            onFirstOutput: () => clearTimeout(firstTokenTimer),
            firstTokenTimedOut: () => firstTokenTimedOut,
            pingMs,
            streamTimeoutSeconds,
            completionCheck,
          },
        );
        if (result.kind === 'done') return undefined;
        const next = retryOrStop(result.reason);
        if (next === 'retry') continue;
        return next;
      }
      clearTimeout(firstTokenTimer);
      const result =
        spec.answer === 'binary'
          ? await relayBinary(ctx, request, reply, answerInput, response, outcome)
          : spec.answer === 'transcription'
            ? await relayTranscription(ctx, request, reply, answerInput, response, outcome)
            : await relayJson(ctx, spec, request, reply, answerInput, response, outcome, {
                retryEmpty: mayRetryEmpty,
                completionCheck,
                conversion,
                redactor,
              });
      answered = result.kind === 'done';
      if (result.kind === 'done') return undefined;
      if (result.kind === 'error') return result.error;
      const next = retryOrStop(result.reason);
      if (next === 'retry') continue;
      return next;
    } finally {
      // The answering attempt is marked by the settlement, which ends the call's trace before this runs.
      if (!answered) markAttempt(input.billing.steps, channelId, upstreamSentAt, true);
      // An attempt that did not settle the call used no tokens of its channel: its slot is free again.
      if (!input.billing.settled) channelTicket?.settle(0);
      upstreamMsBefore += performance.now() - upstreamSentAt;
      clearTimeout(firstTokenTimer);
      // An upload stream the upstream did not read to the end (a refused connection, an early error) is closed.
      if (call && typeof call.body !== 'string' && !call.body.destroyed) call.body.destroy();
    }
  }

  return (
    lastError ??
    localError(503, 'model_not_found', `no channel is available for model ${model} in group ${caller.group}`)
  );
}
