/**
 * Relays a streamed answer (reference §4.4) event by event; memory is one SSE event, the incremental token
 * counter and the sensitive-word carry. The upstream is read one of three ways: OpenAI chat/completions chunks
 * (`data: {...}` … `[DONE]`) and Responses API events (`event: response.*`, usage in `response.completed`) when the
 * client speaks OpenAI too, read in place; or any other format through its adapter's decoder into canonical chat
 * chunks, which the client's ingress encodes (or, when the client speaks that same format, which only meter a
 * stream passed on as it came).
 *
 * Endings (issue 16 item 7): an answer is complete only when the upstream said so (`[DONE]`, `message_stop`, a
 * finish reason, `response.completed`). A stream that breaks or ends before that, times out, or carries an error
 * event after the 200 ends with an error event in the client's protocol and no end marker, so no client takes a
 * cut answer for a whole one; what was produced is billed and the log says the stream was cut off.
 *
 * - Keep-alive: with `general_setting.ping_interval_enabled`, a `: PING` comment goes out whenever nothing was
 *   written for `ping_interval_seconds` — while the first token is slow and between chunks.
 * - Held head: when the attempt may still be given up for another channel (first-token timeout, or an empty
 *   answer with RetryEmptyResponseEnabled), nothing is sent to the client until the first output arrives; the
 *   events before it are held (a role chunk or two). Pings start once the head is sent.
 * - Stream timeout: the upstream client's idle timeout (`StreamingTimeoutSeconds`) ends a silent stream; what
 *   was produced is billed and the client gets an error event before the end.
 * - The charged quota goes out as the comment `: x-turnpike-quota: <n>` just before the end (see context.ts).
 */

import type { AttemptFailure, RelayError } from '../errors.ts';
import type { StreamDecoder } from '../formats/format.ts';
import type { StreamEncoder } from '../formats/ingress.ts';
import { streamErrorOf } from '../formats/openai/stream.ts';
import { createTokenCounter } from '../metering/tokens.ts';
import { EMPTY_USAGE, hasUsage, type NormalisedUsage, normaliseOpenAiUsage } from '../metering/usage.ts';
import { createSseParser, DONE, type SseEvent } from '../sse.ts';
import { toUpstreamFailure, type UpstreamResponse } from '../upstream/client.ts';
import type { Redactor } from '../upstream/redact.ts';
import type { Caller } from './authenticate.ts';
import { QUOTA_HEADER, type RelayContext } from './context.ts';
import type { RelayReply, RelayRequest } from './exchange.ts';
import { isRecord, type Json } from './respond.ts';
import {
  type CompletionCheck,
  createStreamFilter,
  type FilterStep,
  SENSITIVE_REPLACEMENT,
  sensitiveCompletionError,
} from './sensitive-words.ts';
import { type Billing, type SettleOutcome, settle } from './settle.ts';

export interface StreamInput {
  readonly caller: Caller;
  readonly body: Json;
  readonly model: string;
  readonly promptTokens: number;
  readonly billing: Billing;
  readonly clientGone: AbortSignal;
}

/** How the upstream's events are read (see the file's comment). */
export type StreamReading =
  | { readonly kind: 'chat' }
  | { readonly kind: 'responses' }
  | {
      readonly kind: 'decoded';
      readonly decoder: StreamDecoder;
      /** The client speaks the upstream's format: events are passed on as they came, only metered. */
      readonly passUnread: boolean;
    };

export interface StreamControl {
  readonly reading: StreamReading;
  /** Writes chunks, the end and errors in the client's format. */
  readonly encoder: StreamEncoder;
  /** Removes the channel's credentials from upstream text that reaches the client. */
  readonly redactor: Redactor;
  /** Send nothing until the first output (the attempt may still be retried elsewhere). */
  readonly holdHead: boolean;
  /** An answer with no output and no usage is a retryable failure (only while the head is held). */
  readonly retryEmpty: boolean;
  /** Called once, at the first output (stops the first-token timer). */
  onFirstOutput(): void;
  /** Whether the attempt was aborted by the first-token timer. */
  firstTokenTimedOut(): boolean;
  /** Keep-alive interval; 0 = none. */
  readonly pingMs: number;
  readonly streamTimeoutSeconds: number;
  readonly completionCheck: CompletionCheck | undefined;
}

export type StreamResult =
  | { readonly kind: 'done' }
  | { readonly kind: 'retry'; readonly reason: AttemptFailure };

type Outcome = Omit<SettleOutcome, 'usage' | 'isStream' | 'frtMs'>;

const SSE_HEAD = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
};

/** Raw chunk text kept unparsed per stream, at most (see `plainChunk`); past it, chunks are read as they come. */
const DEFERRED_LIMIT = 256 * 1024;

/** `: null` after a `"usage"` key, with the JSON whitespace around it. */
const NULL_VALUE = /^[ \t\r\n]*:[ \t\r\n]*null[ \t\r\n]*/;
const isJsonSpace = (code: number) => code === 32 || code === 10 || code === 13 || code === 9;

/**
 * The text a chat chunk is passed on as without being read, or undefined when it must be read.
 * - A chunk that names no usage passes as it is.
 * - One whose only mention of usage is `"usage": null` (the upstream puts it in every chunk once the relay asks
 *   for usage) passes as it is when the client asked for usage too, and otherwise with that member cut out.
 * A quote inside a JSON string is escaped, so `"usage"` followed by a colon is a key; anything else (a string
 * `"usage"`, a second mention, an unexpected shape) answers undefined and the chunk is read.
 */
export function plainChunk(data: string, clientAskedUsage: boolean): string | undefined {
  const at = data.indexOf('"usage"');
  if (at === -1) return data;
  if (data.indexOf('"usage"', at + 7) !== -1) return undefined;
  const value = NULL_VALUE.exec(data.slice(at + 7, at + 32));
  if (value === null) return undefined;
  const end = at + 7 + value[0].length;
  const next = data.charCodeAt(end);
  if (next !== 44 /* , */ && next !== 125 /* } */) return undefined;
  if (clientAskedUsage) return data;
  if (next === 44) return data.slice(0, at) + data.slice(end + 1);
  // The object's last member: the comma before it goes with it.
  let start = at;
  while (start > 0 && isJsonSpace(data.charCodeAt(start - 1))) start -= 1;
  const before = data.charCodeAt(start - 1);
  if (before === 44) start -= 1;
  else if (before !== 123 /* { */) return undefined;
  return data.slice(0, start) + data.slice(end);
}

/** A chat/completions chunk carrying text the sensitive-word carry held back. */
function heldChatChunk(last: Json, index: number, text: string): string {
  const isCompletion = last.object === 'text_completion';
  const choice = isCompletion
    ? { index, text, finish_reason: null }
    : { index, delta: { content: text }, finish_reason: null };
  return `data: ${JSON.stringify({ id: last.id, object: last.object, created: last.created, model: last.model, choices: [choice] })}\n\n`;
}

/** A Responses API delta carrying text the sensitive-word carry held back. */
const heldResponsesDelta = (key: number, delta: string): string =>
  `event: response.output_text.delta\ndata: ${JSON.stringify({
    type: 'response.output_text.delta',
    output_index: Math.floor(key / 1024),
    content_index: key % 1024,
    delta,
  })}\n\n`;

/** An error of the relay's own in a stream (never retried, shown as it is). */
const streamError = (message: string, code: string, type: string): RelayError => ({
  status: 502,
  message,
  type,
  code,
  param: null,
  isLocal: true,
});

export async function pipeStream(
  ctx: RelayContext,
  request: RelayRequest,
  reply: RelayReply,
  input: StreamInput,
  response: UpstreamResponse,
  outcome: Outcome,
  control: StreamControl,
): Promise<StreamResult> {
  const clientAskedUsage =
    control.reading.kind === 'chat' &&
    isRecord(input.body.stream_options) &&
    input.body.stream_options.include_usage === true;
  const raw = reply.raw;
  let committed = false;
  const held: string[] = [];
  let pingTimer: NodeJS.Timeout | undefined;

  const rawWrite = async (text: string) => {
    if (raw.destroyed || raw.writableEnded) return;
    pingTimer?.refresh();
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
  // What the events of one upstream piece produce is written at once (one syscall per piece, not per event);
  // held events go out with it, after the head.
  let out = '';
  const commit = () => {
    if (committed) return;
    committed = true;
    reply.hijack();
    if (raw.destroyed) return;
    // The reply's headers so far (the request id, cross-origin access) go with the stream's own.
    raw.writeHead(200, {
      ...(reply.getHeaders() as Record<string, string>),
      ...SSE_HEAD,
      ...(control.encoder.contentType ? { 'content-type': control.encoder.contentType } : {}),
    });
    ctx.metrics.streamStarted(raw);
    if (held.length > 0) out = held.splice(0).join('') + out;
    if (control.pingMs > 0) {
      pingTimer = setTimeout(function ping() {
        if (raw.destroyed || raw.writableEnded) return;
        raw.write(': PING\n\n');
        pingTimer?.refresh();
      }, control.pingMs);
      pingTimer.unref();
    }
  };
  const write = (text: string) => {
    if (committed) out += text;
    else held.push(text);
  };
  const flushOut = async () => {
    if (out === '') return;
    const text = out;
    out = '';
    await rawWrite(text);
  };
  if (!control.holdHead) commit();

  const parser = createSseParser();
  const counter = createTokenCounter(input.model);
  const filter = control.completionCheck ? createStreamFilter(control.completionCheck) : undefined;
  let upstreamUsage: NormalisedUsage | undefined;
  let frtMs: number | undefined;
  let sawOutput = false;
  let stoppedFor: readonly string[] | undefined;
  let last: Json = {};
  /** The upstream said the answer is complete. */
  let finished = false;
  /** An error event the upstream sent after its 200. */
  let upstreamError: RelayError | undefined;

  const output = (text: string) => {
    if (text === '') return;
    counter.push(text);
    if (!sawOutput) {
      sawOutput = true;
      control.onFirstOutput();
      commit();
    }
  };

  /** Runs a choice's text through the sensitive filter; false when the answer must stop. */
  const filtered = (step: FilterStep): string | undefined => {
    if (step.found.length > 0 && control.completionCheck?.stop) {
      stoppedFor = step.found;
      return undefined;
    }
    return step.text;
  };

  /** Counts what one choice of a chat/completions chunk produced; answers where its text is kept. */
  const outputChoice = (choice: Json) => {
    const delta = isRecord(choice.delta) ? choice.delta : undefined;
    // Chat keeps text in delta.content, legacy completions in choice.text.
    const holder: Json | undefined = delta ?? (typeof choice.text === 'string' ? choice : undefined);
    const field = delta ? 'content' : 'text';
    const text = holder && typeof holder[field] === 'string' ? (holder[field] as string) : undefined;
    if (text !== undefined) output(text);
    if (delta) {
      if (typeof delta.reasoning_content === 'string') output(delta.reasoning_content);
      if (Array.isArray(delta.tool_calls)) {
        for (const call of delta.tool_calls) {
          const fn = isRecord(call) ? call.function : undefined;
          if (isRecord(fn)) output(`${fn.name ?? ''}${fn.arguments ?? ''}`);
        }
      }
    }
    return { holder, field, text };
  };

  // Once the head is out, a plain chunk is passed on unread and kept raw: it is read only when the upstream
  // ends without reporting usage (its text is counted then), or when the kept text passes the limit.
  const deferred: string[] = [];
  let deferredSize = 0;
  const readDeferred = () => {
    for (const data of deferred.splice(0)) {
      let chunk: unknown;
      try {
        chunk = JSON.parse(data);
      } catch {
        continue;
      }
      if (!isRecord(chunk)) continue;
      last = chunk;
      if (Array.isArray(chunk.choices))
        for (const choice of chunk.choices) if (isRecord(choice)) outputChoice(choice);
    }
    deferredSize = 0;
  };

  /**
   * Counts a chat chunk's output and runs its texts through the sensitive-word filter (changing them in place);
   * answers false when the answer must stop, else whether a text was changed.
   */
  const readChoices = (chunk: Json): boolean | 'changed' => {
    last = chunk;
    let changed = false;
    const choices = Array.isArray(chunk.choices) ? chunk.choices : [];
    for (const choice of choices) {
      if (!isRecord(choice)) continue;
      const index = typeof choice.index === 'number' ? choice.index : 0;
      const ended = choice.finish_reason !== null && choice.finish_reason !== undefined;
      if (ended) finished = true;
      const { holder, field, text } = outputChoice(choice);
      if (filter && holder && (text !== undefined || ended)) {
        let shown = text === undefined ? '' : filtered(filter.push(index, text));
        if (shown === undefined) return false;
        if (ended) {
          const rest = filtered(filter.flush(index));
          if (rest === undefined) return false;
          shown += rest;
        }
        if (shown !== text && !(text === undefined && shown === '')) {
          holder[field] = shown;
          changed = true;
        }
      }
    }
    return changed ? 'changed' : true;
  };

  /** One chat/completions chunk of an OpenAI upstream; returns false to stop the stream. */
  const handleChat = (data: string): boolean => {
    // While the head is held the first output is looked for in every chunk; once it is out (from the start
    // when nothing is held) a plain chunk is not read. One that may hold a credential of the channel is read.
    const plain =
      committed && filter === undefined && !redactor.mayContain(data)
        ? plainChunk(data, clientAskedUsage)
        : undefined;
    if (plain !== undefined) {
      // A finish reason says the answer is whole, even from an upstream that then ends without `[DONE]`.
      if (!finished && (plain.includes('"finish_reason":"') || plain.includes('"finish_reason": "')))
        finished = true;
      deferred.push(plain);
      deferredSize += plain.length;
      if (deferredSize > DEFERRED_LIMIT) readDeferred();
      write(`data: ${plain}\n\n`);
      return true;
    }
    let chunk: unknown;
    try {
      chunk = JSON.parse(data);
    } catch {
      // Not JSON: passed on as it came (the client's parser decides), its credentials removed.
      write(`data: ${redactor.redact(data)}\n\n`);
      return true;
    }
    if (!isRecord(chunk)) {
      write(`data: ${redactor.redact(data)}\n\n`);
      return true;
    }
    if (chunk.error !== undefined && chunk.choices === undefined) {
      upstreamError = streamErrorOf(chunk.error);
      return false;
    }
    const usage = normaliseOpenAiUsage(chunk.usage);
    if (hasUsage(usage)) {
      upstreamUsage = usage;
      // The upstream's count is the bill: what was kept unread need not be counted.
      deferred.length = 0;
      deferredSize = 0;
    } else if (deferred.length > 0) readDeferred();
    const read = readChoices(chunk);
    if (read === false) return false;
    const changed = read === 'changed';
    if (clientAskedUsage || !('usage' in chunk)) {
      write(`data: ${changed ? JSON.stringify(chunk) : redactor.redact(data)}\n\n`);
      return true;
    }
    // The client did not ask for usage: the usage-only chunk is dropped, and `usage: null` fields removed.
    const choices = Array.isArray(chunk.choices) ? chunk.choices : [];
    if (choices.length === 0 && chunk.usage !== null) return true;
    const { usage: _hidden, ...visible } = chunk;
    write(`data: ${JSON.stringify(visible)}\n\n`);
    return true;
  };

  /**
   * One event of an upstream of another format, read by its adapter into canonical chunks; they are encoded for
   * the client, or, when the client speaks the upstream's format, only metered while the event goes on as it came.
   */
  const handleDecoded = (event: SseEvent, decoder: StreamDecoder, passUnread: boolean): boolean => {
    const decoded = decoder.push(event);
    if (decoded.error) {
      upstreamError = decoded.error;
      return false;
    }
    if (decoded.finished) finished = true;
    for (const chunk of decoded.chunks) {
      const read = readChoices(chunk);
      if (read === false) return false;
      if (!passUnread) write(encoder.chunk(chunk));
    }
    if (passUnread) {
      const data = redactor.redact(event.data);
      write(encoder.passEvent ? encoder.passEvent(data) : frame(event.event, data));
    }
    return true;
  };

  /** Masks every complete output text a Responses API event repeats (`.done` events, `response.completed`). */
  const maskTexts = (payload: Json): boolean => {
    const check = control.completionCheck;
    if (!check) return false;
    let changed = false;
    const mask = (holder: unknown) => {
      if (!isRecord(holder) || typeof holder.text !== 'string') return;
      const masked = check.words.matcher.replaceAll(holder.text, SENSITIVE_REPLACEMENT);
      if (masked !== holder.text) {
        holder.text = masked;
        changed = true;
      }
    };
    const maskItem = (item: unknown) => {
      if (isRecord(item) && Array.isArray(item.content)) for (const part of item.content) mask(part);
    };
    mask(payload);
    mask(payload.part);
    maskItem(payload.item);
    if (isRecord(payload.response) && Array.isArray(payload.response.output))
      for (const item of payload.response.output) maskItem(item);
    return changed;
  };
  const textKey = (payload: Json): number =>
    (typeof payload.output_index === 'number' ? payload.output_index : 0) * 1024 +
    (typeof payload.content_index === 'number' ? payload.content_index : 0);
  const frame = (name: string | undefined, data: string) =>
    `${name === undefined ? '' : `event: ${name}\n`}data: ${data}\n\n`;

  /** One Responses API event: passed through as it came (event name and data), masked when asked. */
  const handleResponses = (event: SseEvent): boolean => {
    let payload: unknown;
    try {
      payload = JSON.parse(event.data);
    } catch {
      payload = undefined;
    }
    const type = event.event ?? (isRecord(payload) && typeof payload.type === 'string' ? payload.type : '');
    if (type === 'response.completed' || type === 'response.incomplete' || type === 'response.failed')
      finished = true;
    if (type === 'error' && isRecord(payload)) {
      upstreamError = streamErrorOf(payload);
      return false;
    }
    let changed = false;
    if (isRecord(payload)) {
      if (type.endsWith('.delta') && typeof payload.delta === 'string') output(payload.delta);
      const inner = isRecord(payload.response) ? payload.response : undefined;
      if (inner) last = inner;
      const usage = normaliseOpenAiUsage(inner?.usage);
      if (hasUsage(usage)) upstreamUsage = usage;
      if (filter) {
        if (type === 'response.output_text.delta' && typeof payload.delta === 'string') {
          const shown = filtered(filter.push(textKey(payload), payload.delta));
          if (shown === undefined) return false;
          changed = shown !== payload.delta;
          payload.delta = shown;
        } else if (type === 'response.output_text.done') {
          const rest = filtered(filter.flush(textKey(payload)));
          if (rest === undefined) return false;
          if (rest !== '') {
            const { text: _full, ...fields } = payload;
            const delta = { ...fields, type: 'response.output_text.delta', delta: rest };
            write(frame(event.event && 'response.output_text.delta', JSON.stringify(delta)));
          }
        }
        if (maskTexts(payload)) changed = true;
      }
    }
    write(frame(event.event, changed ? JSON.stringify(payload) : redactor.redact(event.data)));
    return true;
  };

  const { reading, encoder, redactor } = control;
  const handle = (event: SseEvent): boolean => {
    if (reading.kind === 'decoded') {
      frtMs ??= performance.now() - outcome.startedAt;
      return handleDecoded(event, reading.decoder, reading.passUnread);
    }
    if (event.data === DONE) {
      finished = true;
      return true;
    }
    frtMs ??= performance.now() - outcome.startedAt;
    return reading.kind === 'chat' ? handleChat(event.data) : handleResponses(event);
  };

  let failure: ReturnType<typeof toUpstreamFailure> | undefined;
  try {
    let going = true;
    receiving: for await (const piece of response.body) {
      for (const event of parser.push(piece)) {
        going = handle(event);
        if (!going) break receiving;
      }
      // When the body's end came with this piece, what it produced goes out with the end of the answer, in
      // one write; otherwise it goes out now (an upstream may stay open after its end marker).
      if (!response.body.ended) await flushOut();
    }
    if (going) for (const event of parser.end()) if (!handle(event)) break;
  } catch (error) {
    failure = toUpstreamFailure(error);
    if (!committed && control.firstTokenTimedOut()) {
      clearTimeout(pingTimer);
      return { kind: 'retry', reason: 'first-token-timeout' };
    }
    if (failure.kind !== 'aborted')
      request.log.warn({ channelId: outcome.channelId, kind: failure.kind }, 'upstream stream broke');
  }
  if (reading.kind === 'decoded') upstreamUsage = reading.decoder.usage();

  const clientThere = !input.clientGone.aborted;
  /** How the answer ended; anything but `complete` (and a sensitive-word stop) is an interrupted answer. */
  const ending: StreamEnding = !clientThere
    ? 'client_gone'
    : stoppedFor !== undefined
      ? 'stopped'
      : upstreamError !== undefined
        ? 'upstream_error'
        : failure?.kind === 'timeout'
          ? 'timeout'
          : failure !== undefined || !finished
            ? 'cut_off'
            : 'complete';
  if (
    !committed &&
    !sawOutput &&
    !hasUsage(upstreamUsage) &&
    control.retryEmpty &&
    (ending === 'complete' || ending === 'cut_off') &&
    failure === undefined
  ) {
    return { kind: 'retry', reason: 'empty-response' };
  }
  // Also when the client left: the reply is taken over so Fastify does not answer it again.
  commit();
  try {
    if (clientThere && filter && stoppedFor === undefined) {
      // Text still held back by the sensitive-word carry (a choice that never sent its last chunk).
      for (const index of filter.pending()) {
        const rest = filtered(filter.flush(index));
        if (rest === undefined) break;
        if (rest === '') continue;
        if (reading.kind === 'chat') write(heldChatChunk(last, index, rest));
        else if (reading.kind === 'responses') write(heldResponsesDelta(index, rest));
        else write(encoder.chunk(heldChunk(last, index, rest)));
      }
    }
    // Without usage from the upstream, the chunks passed on unread are counted now.
    if (!hasUsage(upstreamUsage)) readDeferred();
    const counted = counter.total();
    const usage: NormalisedUsage = hasUsage(upstreamUsage)
      ? ending === 'complete' || ending === 'stopped'
        ? upstreamUsage
        : // An interrupted stream may have reported only its start (Anthropic's message_start): the output
          // produced since is counted.
          { ...upstreamUsage, completionTokens: Math.max(upstreamUsage.completionTokens, counted) }
      : {
          ...EMPTY_USAGE,
          promptTokens: input.promptTokens,
          completionTokens: counted,
          source: 'counted',
        };
    const interrupted = ending === 'upstream_error' || ending === 'timeout' || ending === 'cut_off';
    if (clientThere) {
      const writesEnd = reading.kind === 'chat' || (reading.kind === 'decoded' && !reading.passUnread);
      if (stoppedFor !== undefined) {
        write(encoder.error(sensitiveCompletionError()));
      } else if (interrupted) {
        write(encoder.error(endingError(ending, upstreamError, control.streamTimeoutSeconds, redactor)));
      } else if (writesEnd) {
        write(encoder.end(usage, hasUsage(upstreamUsage) && reading.kind === 'chat'));
      }
    }
    let charged = 0;
    try {
      charged = await settle(ctx, request, input.caller, input.billing, {
        ...outcome,
        usage,
        isStream: true,
        frtMs,
        ...(ending === 'complete'
          ? {}
          : { note: ENDING_NOTES[ending], other: { ...outcome.other, stream_end: ending } }),
      });
    } finally {
      if (clientThere) {
        if (encoder.quotaComment) write(`: ${QUOTA_HEADER}: ${charged}\n\n`);
        // The end marker says the answer is whole: an interrupted one goes without it.
        if (!interrupted) write(encoder.done);
      }
    }
  } finally {
    clearTimeout(pingTimer);
    if (committed && !raw.writableEnded) raw.end(raw.destroyed ? undefined : out);
  }
  if (ending !== 'complete' && ending !== 'stopped')
    request.log.info(
      { channelId: outcome.channelId, ending, kind: failure?.kind },
      'stream ended early; billed what was produced',
    );
  if (stoppedFor !== undefined)
    request.log.warn(
      { channelId: outcome.channelId, words: stoppedFor },
      'answer stopped on sensitive words',
    );
  return { kind: 'done' };
}

/** How a stream ended, as the consume log's `other.stream_end` says when it is not `complete`. */
export type StreamEnding = 'complete' | 'client_gone' | 'cut_off' | 'timeout' | 'upstream_error' | 'stopped';

const ENDING_NOTES: Readonly<Record<Exclude<StreamEnding, 'complete'>, string>> = {
  client_gone: 'stream left by the client',
  cut_off: 'stream cut off by the upstream',
  timeout: 'stream timed out',
  upstream_error: 'stream ended by an upstream error',
  stopped: 'stream stopped on sensitive words',
};

/** The error event an interrupted answer ends with. */
function endingError(
  ending: StreamEnding,
  upstreamError: RelayError | undefined,
  timeoutSeconds: number,
  redactor: Redactor,
): RelayError {
  if (ending === 'upstream_error' && upstreamError)
    return { ...upstreamError, message: redactor.redact(upstreamError.message) };
  if (ending === 'timeout')
    return streamError(
      `the upstream sent nothing for ${timeoutSeconds} s; the answer is cut off`,
      'stream_timeout',
      'upstream_error',
    );
  return streamError(
    'the upstream ended the stream before the answer was complete',
    'stream_cut_off',
    'upstream_error',
  );
}

/** A canonical chunk carrying text the sensitive-word carry held back. */
const heldChunk = (last: Json, index: number, text: string): Json => ({
  id: last.id,
  object: 'chat.completion.chunk',
  created: last.created,
  model: last.model,
  choices: [{ index, delta: { content: text }, finish_reason: null }],
});
