/**
 * One attempt on one channel: the route to it (the client's own format, or through the canonical chat shape), the
 * channel's own limits, the upstream request its provider builds, and what came back, as a typed outcome for the
 * loop in attempts.ts. A 200 is handed to the endpoint's relay step (`answerAttempt`).
 */
import {
  type Endpoint,
  type EndpointSpec,
  type Ingress,
  isRelayError,
  type RelayError,
} from '../contract.ts';
import { type AttemptFailure, mapStatusCode, shouldRetry } from '../errors.ts';
import { keepHostedTools } from '../formats/canonical.ts';
import type { Format, UpstreamCall } from '../formats/format.ts';
import { admitChannelLimits } from '../limits/admit.ts';
import type { LimitTicket } from '../limits/limiter.ts';
import { markAttempt } from '../metrics/tracing.ts';
import { CredentialError } from '../providers/provider.ts';
import { type Provider, providerFor } from '../providers/registry.ts';
import type { RelayChannel } from '../state/channel-cache.ts';
import {
  abortedWith,
  toUpstreamFailure,
  type UpstreamFailureKind,
  type UpstreamResponse,
} from '../upstream/client.ts';
import { type Redactor, redactorOf } from '../upstream/redact.ts';
import {
  type AnswerResult,
  relayBinary,
  relayJson,
  relayTranscription,
  type UpstreamAnswer,
} from './answer.ts';
import type { AttemptOutcome, Attempts } from './attempts.ts';
import { checkChannelHealth } from './channel-health.ts';
import type { RelayContext } from './context.ts';
import type { HeldExchange } from './exchange.ts';
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

type Failed = Extract<AttemptOutcome, { kind: 'failed' }>;

/**
 * Admits the `attempt`-th attempt that counts (from 0) to `channel`: the route to it, a conversion the request
 * allows, the channel's own limits. Answers the channel to send to, or the outcome when there is nothing to send
 * (`skipped`; `done` for a token count answered locally).
 */
export async function admitAttempt(
  ctx: RelayContext,
  exchange: HeldExchange,
  attempts: Attempts,
  channel: RelayChannel,
  attempt: number,
): Promise<AttemptOutcome | Admitted> {
  const { spec, ingress, reply, prepared } = exchange;
  const upstreamModel = channel.modelMapping[prepared.model] ?? prepared.model;
  const provider = providerFor(channel.type, upstreamModel);
  const route = provider && routeOf(spec, ingress, provider);
  if (provider && !route && spec.countLocally) {
    // Counting tokens needs no upstream: a channel of another format is answered from the relay's own count.
    reply.code(200).header('content-type', 'application/json').send(spec.countLocally(prepared));
    return { kind: 'done' };
  }
  // A request that cannot be converted (ingress.refuseConversion) skips the channels it would need it for.
  const refused = route?.converted ? attempts.refusal() : undefined;
  if (!provider || !route || refused) return { kind: 'skipped', error: refused };
  // A stored chain (docs/adr/0051): its holder gets the request as sent, another channel the chain replayed.
  const ownBody = route.converted ? undefined : exchange.stored?.passThroughBody(channel.id);
  if (isRelayError(ownBody)) return { kind: 'skipped', error: ownBody };
  // A channel at its own limit is passed over like one that cannot serve (docs/adr/0028).
  const channelLimit = await admitChannelLimits(ctx, exchange.ingress, channel, prepared);
  if (!channelLimit.ok) return { kind: 'skipped', error: channelLimit.error };
  const { ticket } = channelLimit;
  if (ticket) exchange.billing.limits?.push(ticket);
  attempts.used.push(channel.id);
  return { kind: 'admitted', channel, provider, route, upstreamModel, attempt, ticket, ownBody };
}

/** The channel an attempt was admitted to, and how it is reached. */
export interface Admitted {
  readonly kind: 'admitted';
  readonly channel: RelayChannel;
  readonly provider: Provider;
  readonly route: Route;
  readonly upstreamModel: string;
  readonly attempt: number;
  /** The channel's concurrency and token slot this attempt holds, if it has limits. */
  readonly ticket: LimitTicket | undefined;
  /** The request in the client's format to send instead of the client's own (a replayed chain), if any. */
  readonly ownBody?: Readonly<Record<string, unknown>> | undefined;
}

/** Sends the request to the admitted channel and hands a 200 to the answer step; anything else is a failure. */
export async function sendAttempt(
  ctx: RelayContext,
  exchange: HeldExchange,
  attempts: Attempts,
  { channel, provider, route, upstreamModel, attempt, ticket, ownBody }: Admitted,
): Promise<AttemptOutcome> {
  const { ingress, request, reply, caller, prepared } = exchange;
  const redactor = redactorOf(channel);
  const retryContext = {
    remaining: attempts.retryTimes - attempt,
    isForcedChannel: caller.forcedChannelId !== undefined,
    isAnthropicChannel: provider.retriesBadRequest,
    retryEmptyAndSlow: true,
  };
  /** The outcome of a failure: the channel's health is checked, and another channel tried when the rules allow. */
  const failed = (error: RelayError, retryAs: RelayError | AttemptFailure = error): Failed => {
    // A failure that was one key's alone leaves the channel to be tried again with another key.
    if (checkChannelHealth(ctx, channel, error) && ctx.channels.isAvailable(channel.id))
      attempts.tried.delete(channel.id);
    return { kind: 'failed', error, retry: shouldRetry(retryAs, retryContext) };
  };
  const failedFor = (reason: AttemptFailure): AttemptOutcome => {
    request.log.warn({ channelId: channel.id, reason }, 'upstream attempt failed');
    return failed(failureError(reason, attempts.firstTokenSeconds), reason);
  };
  // Hosted tools the channel's format has no equivalent of are left out, and the client told (docs/adr/0029).
  const hosted = route.converted
    ? keepHostedTools(attempts.canonical(), provider.format.hostedTools)
    : { chat: undefined, dropped: [] };
  if (hosted.dropped.length > 0) reply.header(DROPPED_TOOLS_HEADER, hosted.dropped.join(', '));
  else reply.removeHeader(DROPPED_TOOLS_HEADER);

  const firstToken = startFirstTokenTimer(attempts.firstTokenSeconds, exchange.clientGone);

  let call: UpstreamCall | undefined;
  let answered = false;
  const upstreamSentAt = performance.now();
  try {
    let response: UpstreamResponse;
    try {
      call = await provider.buildRequest(channel, {
        endpoint: route.endpoint,
        payload: hosted.chat
          ? { kind: 'json', body: hosted.chat }
          : ownBody
            ? { kind: 'json', body: ownBody }
            : prepared.payload,
        upstreamModel,
        isStream: attempts.isStream,
        options: ctx.deps.options,
        clientHeaders: route.converted ? undefined : prepared.clientHeaders,
        passThrough: !route.converted && attempts.passThrough,
      });
      response = await ctx.upstream.request({
        ...call,
        proxy: channel.proxy,
        signal: firstToken.signal,
        ...(attempts.isStream ? { bodyTimeoutMs: attempts.streamTimeoutSeconds * 1000 } : {}),
      });
    } catch (error) {
      if (firstToken.timedOut() && !exchange.clientGone.signal.aborted)
        return failedFor('first-token-timeout');
      const refusal = requestFailure(error, redactor);
      if (refusal === undefined) return { kind: 'done' }; // the client left; the caller refunds
      if (refusal.kind === 'credential')
        request.log.warn({ channelId: channel.id, code: refusal.error.code }, 'upstream credential failed');
      else request.log.warn({ channelId: channel.id, kind: refusal.kind }, 'upstream request failed');
      return failed(refusal.error, refusal.retryAs);
    }

    // A provider that reports errors inside a 200 (Wenxin) says which status the answer stands for.
    if (response.status === 200 && !attempts.isStream && provider.checkAnswer)
      response = await provider.checkAnswer(response);
    if (response.status !== 200) {
      const text = await response.readText().catch(() => '');
      const read = provider.readError(response.status, text, response.headers);
      const parsed = { ...read, message: redactor.redact(read.message) };
      request.log.warn(
        { channelId: channel.id, status: response.status, code: parsed.code },
        'upstream answered an error',
      );
      const status = mapStatusCode(response.status, channel.statusCodeMapping ?? undefined);
      return { ...failed(parsed), error: { ...parsed, status } };
    }

    attempts.affinity?.served(channel.id, channel.keyFingerprint);
    const servedTier = provider.format.serviceTierOf?.(response.headers);
    const mayRetryEmpty = attempts.retryEmptyEnabled && shouldRetry('empty-response', retryContext);
    const result = await answerAttempt(ctx, exchange, attempts, {
      response:
        attempts.isStream && provider.reframeStream
          ? { ...response, body: provider.reframeStream(response.body) }
          : response,
      outcome: {
        channelId: channel.id,
        usedChannels: attempts.used,
        upstreamModel,
        startedAt: exchange.startedAt,
        upstreamSentAt,
        upstreamMsBefore: attempts.upstreamMsBefore,
        ...(servedTier === undefined ? {} : { serviceTier: servedTier }),
        ...(hosted.dropped.length > 0 ? { other: { dropped_tools: hosted.dropped } } : {}),
      },
      redactor,
      format: provider.format,
      conversion: route.converted ? { format: provider.format, ingress } : undefined,
      retryEmpty: mayRetryEmpty,
      completionCheck: attempts.completionCheck,
      holdHead: attempts.firstTokenSeconds > 0 || mayRetryEmpty,
      firstToken,
    });
    answered = result.kind === 'done';
    if (result.kind === 'done') return { kind: 'done' };
    if (result.kind === 'error') return { kind: 'failed', error: result.error, retry: false };
    return failedFor(result.reason);
  } finally {
    // The answering attempt is marked by the settlement, which ends the call's trace before this runs.
    if (!answered) markAttempt(exchange.billing.steps, channel.id, upstreamSentAt, true);
    // An attempt that did not settle the call used no tokens of its channel: its slot is free again.
    if (!exchange.billing.settled) ticket?.settle(0);
    attempts.upstreamMsBefore += performance.now() - upstreamSentAt;
    firstToken.arrived();
    // An upload stream the upstream did not read to the end (a refused connection, an early error) is closed.
    if (call && typeof call.body !== 'string' && !call.body.destroyed) call.body.destroy();
  }
}

/**
 * A request that got no answer, as the error to answer with and what to judge a retry by; undefined when the
 * client left (the attempt was aborted with it).
 */
function requestFailure(
  error: unknown,
  redactor: Redactor,
):
  | {
      readonly kind: 'credential' | UpstreamFailureKind;
      readonly error: RelayError;
      readonly retryAs: RelayError | AttemptFailure;
    }
  | undefined {
  // No credential to send (a refused token exchange, a key that does not parse): as if answered so.
  if (error instanceof CredentialError) {
    const refusal = { ...error.error, message: redactor.redact(error.error.message) };
    return { kind: 'credential', error: refusal, retryAs: refusal };
  }
  const failure = toUpstreamFailure(error);
  if (failure.kind === 'aborted') return undefined;
  const broken: RelayError = {
    status: failure.kind === 'timeout' ? 504 : 502,
    message: failure.message,
    type: 'upstream_error',
    code: 'do_request_failed',
    param: null,
    isLocal: false,
  };
  return {
    kind: failure.kind,
    error: broken,
    retryAs: failure.kind === 'connect' ? 'connect-error' : broken,
  };
}

/** The attempt's first-token timer (`FirstTokenTimeoutSeconds`), or a stand-in that never fires. */
interface FirstTokenTimer {
  /** Aborts the attempt: when the client leaves, or when the timer fires. */
  readonly signal: AbortSignal;
  /** The first output arrived (or the attempt ended): the timer stops. */
  arrived(): void;
  /** Whether the attempt was aborted by the timer. */
  timedOut(): boolean;
}

const doNothing = () => {};
const never = () => false;

/**
 * The first-token timer covers the wait for the response head too; it aborts this attempt only. Without one the
 * attempt ends when the client leaves, and the call's controller serves.
 */
function startFirstTokenTimer(seconds: number, clientGone: AbortController): FirstTokenTimer {
  if (seconds <= 0) return { signal: clientGone.signal, arrived: doNothing, timedOut: never };
  const abort = abortedWith(clientGone.signal);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    abort.abort();
  }, seconds * 1000);
  return { signal: abort.signal, arrived: () => clearTimeout(timer), timedOut: () => timedOut };
}

/** A 200 with what the stream step needs of the attempt. */
interface AttemptAnswer extends UpstreamAnswer {
  /** The channel's format. */
  readonly format: Format;
  /** Send nothing until the first output: the attempt may still be given up for another channel. */
  readonly holdHead: boolean;
  readonly firstToken: FirstTokenTimer;
}

/** Hands the upstream's 200 to the endpoint's relay step: a stream, JSON, audio bytes or a transcription. */
function answerAttempt(
  ctx: RelayContext,
  exchange: HeldExchange,
  attempts: Attempts,
  answer: AttemptAnswer,
): Promise<AnswerResult> {
  const { spec, ingress, request } = exchange;
  if (attempts.isStream && spec.stream) {
    const { format } = answer;
    const reading: StreamReading =
      format.isCanonical === true && answer.conversion === undefined
        ? { kind: spec.stream === 'responses' ? 'responses' : 'chat' }
        : {
            kind: 'decoded',
            decoder: format.streamToChat(answer.outcome.upstreamModel),
            // A sensitive-word check rewrites text: the stream then goes through the canonical shape.
            passUnread: answer.conversion === undefined && attempts.completionCheck === undefined,
          };
    const body = exchange.prepared.payload.kind === 'json' ? exchange.prepared.payload.body : {};
    return pipeStream(ctx, exchange, answer, {
      reading,
      encoder: ingress.streamEncoder(body, exchange.prepared.model, request.id, request.url),
      holdHead: answer.holdHead,
      onFirstOutput: answer.firstToken.arrived,
      firstTokenTimedOut: answer.firstToken.timedOut,
      pingMs: attempts.pingMs,
      streamTimeoutSeconds: attempts.streamTimeoutSeconds,
    });
  }
  answer.firstToken.arrived();
  if (spec.answer === 'binary') return relayBinary(ctx, exchange, answer);
  if (spec.answer === 'transcription') return relayTranscription(ctx, exchange, answer);
  return relayJson(ctx, exchange, answer);
}
