/**
 * Relays a 200 answer that is not a stream: JSON read whole (bounded) and metered, audio bytes piped, a
 * transcription in whatever format was asked. Each settles the reservation before the client gets the answer,
 * so the charged quota can go in the `x-turnpike-quota` header.
 */

import { Readable } from 'node:stream';
import { type SettleOutcome, settle } from '../books/settle.ts';
import type { EndpointSpec, Ingress, NormalisedUsage, RelayError, RelayReply } from '../contract.ts';
import type { AttemptFailure } from '../errors.ts';
import { upstreamFault } from '../errors.ts';
import type { Format } from '../formats/format.ts';
import { transcriptionUsage } from '../formats/openai/media-endpoints.ts';
import { countedChat, visitChat } from '../formats/openai/text-endpoints.ts';
import { countTextTokens, encodingForModel } from '../metering/tokens.ts';
import { EMPTY_USAGE, hasUsage } from '../metering/usage.ts';
import { HOP_BY_HOP_HEADERS, toUpstreamFailure, type UpstreamResponse } from '../upstream/client.ts';
import type { Redactor } from '../upstream/redact.ts';
import { QUOTA_HEADER, type RelayContext } from './context.ts';
import type { HeldExchange } from './exchange.ts';
import { isRecord, type Json } from './respond.ts';
import { type CompletionCheck, SENSITIVE_REPLACEMENT, sensitiveCompletionError } from './sensitive-words.ts';

/** The upstream's 200 for one attempt, with what the answer steps need to read, check and bill it. */
export interface UpstreamAnswer {
  readonly response: UpstreamResponse;
  /** The attempt as the settlement logs it (channel, upstream model, timings). */
  readonly outcome: Outcome;
  /** Removes the channel's credentials from upstream text that reaches the client. */
  readonly redactor: Redactor;
  /** The upstream speaks another format than the client: its answer goes through the canonical shape. */
  readonly conversion: { readonly format: Format; readonly ingress: Ingress } | undefined;
  /** An answer with no output and no usage is a retryable failure (RetryEmptyResponseEnabled). */
  readonly retryEmpty: boolean;
  readonly completionCheck: CompletionCheck | undefined;
}

export type AnswerResult =
  | { readonly kind: 'done' }
  | { readonly kind: 'error'; readonly error: RelayError }
  | { readonly kind: 'retry'; readonly reason: AttemptFailure };

export type Outcome = Omit<SettleOutcome, 'usage' | 'isStream' | 'frtMs'>;

const ANSWER_LIMIT = 64 * 1024 * 1024;

async function readAnswer(response: UpstreamResponse): Promise<string | AnswerResult> {
  try {
    return await response.readText(ANSWER_LIMIT);
  } catch (error) {
    if (toUpstreamFailure(error).kind === 'aborted') return { kind: 'done' };
    return { kind: 'error', error: upstreamFault('the upstream answer was cut off', 'bad_response') };
  }
}

/** A JSON answer: usage from the endpoint, else counted; sensitive words checked when asked. */
export async function relayJson(
  ctx: RelayContext,
  exchange: HeldExchange,
  answered: UpstreamAnswer,
): Promise<AnswerResult> {
  const { spec, request, reply, prepared } = exchange;
  const { response, outcome } = answered;
  const text = await readAnswer(response);
  if (typeof text !== 'string') return text;
  const frtMs = performance.now() - outcome.startedAt;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (!isRecord(parsed))
    return { kind: 'error', error: upstreamFault('the upstream answer is not JSON', 'bad_response_body') };

  const { conversion } = answered;
  let answer: Json = parsed;
  let reported: NormalisedUsage | undefined;
  // What reads the answer's output: the endpoint's own, or the canonical chat answer's.
  let view: Pick<EndpointSpec, 'visitOutput' | 'countedOutput'> = spec;
  if (conversion) {
    const { format } = conversion;
    const isEmbeddings = spec.canonical === 'embeddings' && format.answerToEmbeddings !== undefined;
    const canonical = isEmbeddings
      ? (format.answerToEmbeddings?.(parsed, outcome.upstreamModel) ?? { answer: parsed, usage: undefined })
      : format.answerToChat(parsed, outcome.upstreamModel);
    answer = canonical.answer;
    reported = canonical.usage;
    view = isEmbeddings ? {} : { visitOutput: visitChat, countedOutput: countedChat };
  } else reported = spec.usageOf?.(answer);
  // The output text is read only to count it (no usage reported) or to check it for sensitive words.
  const readsOutput = !hasUsage(reported) || answered.completionCheck !== undefined;
  const outputParts: string[] = [];
  if (readsOutput)
    view.visitOutput?.(answer, (part) => {
      outputParts.push(part);
      return part;
    });
  const counted = !readsOutput ? '' : view.countedOutput ? view.countedOutput(answer) : outputParts.join('');
  // Empty: an endpoint with output that produced none and reported no usage (an upstream glitch).
  if (answered.retryEmpty && view.visitOutput !== undefined && !hasUsage(reported) && counted === '')
    return { kind: 'retry', reason: 'empty-response' };
  const usage: NormalisedUsage = hasUsage(reported)
    ? reported
    : {
        ...EMPTY_USAGE,
        promptTokens: prepared.promptTokens,
        completionTokens: counted === '' ? 0 : countTextTokens(counted, encodingForModel(prepared.model)),
        source: 'counted',
      };

  // An answer that echoes a credential of the channel (rare: checked by a substring search) is rewritten.
  let body = answered.redactor.mayContain(text) ? answered.redactor.redact(text) : text;
  let stopped: RelayError | undefined;
  const check = answered.completionCheck;
  if (check && view.visitOutput) {
    const found = new Set<string>();
    for (const part of outputParts) for (const word of check.words.matcher.findWords(part)) found.add(word);
    if (found.size > 0) {
      request.log.warn({ channelId: outcome.channelId, words: [...found] }, 'sensitive words in an answer');
      if (check.stop) stopped = sensitiveCompletionError();
      else {
        view.visitOutput(answer, (part) => check.words.matcher.replaceAll(part, SENSITIVE_REPLACEMENT));
        body = JSON.stringify(answer);
      }
    }
  }
  if (conversion)
    body = answered.redactor.redact(
      JSON.stringify(
        conversion.ingress.fromChat(
          answer,
          usage,
          prepared.model,
          prepared.payload.kind === 'json' ? prepared.payload.body : undefined,
        ),
      ),
    );

  exchange.capture?.answer(body);
  // Kept as the client gets it (docs/adr/0051); a stopped answer is not shown, so not kept.
  if (exchange.stored && !stopped)
    exchange.stored.answered(JSON.parse(body) as Json, outcome.channelId, conversion !== undefined);
  const charged = await settle(ctx, request, exchange.caller, exchange.billing, {
    ...outcome,
    usage,
    isStream: false,
    frtMs,
    note: prepared.note,
  });
  // A stopped answer is billed (the upstream produced it) but not shown.
  if (stopped) {
    reply.header(QUOTA_HEADER, String(charged));
    return { kind: 'error', error: stopped };
  }
  sendJsonRaw(reply, body, charged);
  return { kind: 'done' };
}

/**
 * Writes a 200 JSON answer straight to the socket: one `writeHead` and one `end`, without Fastify's send path
 * (hooks, payload checks), which is a measurable share of a small answer's cost. The headers Fastify already has
 * (`x-request-id`) go with it.
 */
function sendJsonRaw(reply: RelayReply, body: string, charged: number): void {
  reply.hijack();
  const raw = reply.raw;
  if (raw.destroyed) return;
  raw.writeHead(200, {
    ...(reply.getHeaders() as Record<string, string>),
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    [QUOTA_HEADER]: String(charged),
  });
  raw.end(body);
}

/** Speech: the bill is the input's characters, known before; the audio is piped as it comes. */
export async function relayBinary(
  ctx: RelayContext,
  exchange: HeldExchange,
  { response, outcome }: UpstreamAnswer,
): Promise<AnswerResult> {
  const { request, reply, prepared } = exchange;
  const frtMs = performance.now() - outcome.startedAt;
  const charged = await settle(ctx, request, exchange.caller, exchange.billing, {
    ...outcome,
    usage: { ...EMPTY_USAGE, promptTokens: prepared.promptTokens },
    isStream: false,
    frtMs,
    note: prepared.note,
  });
  for (const [name, value] of Object.entries(response.headers)) {
    if (value === undefined || HOP_BY_HOP_HEADERS.has(name) || name === 'x-request-id') continue;
    if (name === 'content-type' || name === 'content-disposition' || name.startsWith('x-'))
      reply.header(name, value);
  }
  const stream = Readable.from(response.body, { objectMode: false });
  stream.on('error', (error) => {
    const failure = toUpstreamFailure(error);
    if (failure.kind !== 'aborted')
      request.log.warn({ channelId: outcome.channelId, kind: failure.kind }, 'upstream audio broke');
  });
  reply.code(200).header(QUOTA_HEADER, String(charged)).send(stream);
  return { kind: 'done' };
}

/** Transcription or translation: JSON (json, verbose_json) or text (text, srt, vtt), relayed as it came. */
export async function relayTranscription(
  ctx: RelayContext,
  exchange: HeldExchange,
  { response, outcome }: UpstreamAnswer,
): Promise<AnswerResult> {
  const { request, reply, prepared } = exchange;
  const text = await readAnswer(response);
  if (typeof text !== 'string') return text;
  const frtMs = performance.now() - outcome.startedAt;
  let answer: Json | undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    answer = isRecord(parsed) ? parsed : undefined;
  } catch {
    answer = undefined;
  }
  const measured = answer ? transcriptionUsage(answer) : undefined;
  let usage: NormalisedUsage;
  let note: string;
  if (measured) {
    usage = measured.usage;
    note = measured.note;
  } else {
    usage = { ...EMPTY_USAGE, promptTokens: prepared.promptTokens, source: 'counted' };
    note = prepared.note ?? 'audio length estimated';
  }
  const charged = await settle(ctx, request, exchange.caller, exchange.billing, {
    ...outcome,
    usage,
    isStream: false,
    frtMs,
    note,
  });
  const contentType = response.headers['content-type'];
  reply
    .code(200)
    .header(
      'content-type',
      typeof contentType === 'string' ? contentType : answer ? 'application/json' : 'text/plain',
    )
    .header(QUOTA_HEADER, String(charged))
    .send(text);
  return { kind: 'done' };
}
