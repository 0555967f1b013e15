/**
 * Relays a streamed answer (reference §4.4) event by event; memory is one SSE event, the incremental token
 * counter and the sensitive-word carry. Two dialects: OpenAI chat/completions chunks (`data: {...}` … `[DONE]`)
 * and Responses API events (`event: response.*`, usage in `response.completed`, no `[DONE]`).
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
import type { AttemptFailure } from '../errors.ts';
import { createTokenCounter } from '../metering/tokens.ts';
import {
  EMPTY_USAGE,
  hasUsage,
  type NormalisedUsage,
  normaliseOpenAiUsage,
  toOpenAiUsage,
} from '../metering/usage.ts';
import { createSseParser, DONE, type SseEvent } from '../sse.ts';
import { toUpstreamFailure, type UpstreamResponse } from '../upstream/client.ts';
import type { Caller } from './authenticate.ts';
import { QUOTA_HEADER, type RelayContext } from './context.ts';
import type { StreamDialect } from './endpoints/spec.ts';
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

export interface StreamControl {
  readonly dialect: StreamDialect;
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

/** An error in the stream's own format: a chunk with `error` (chat), or an `error` event (Responses API). */
const errorEvent = (dialect: StreamDialect, message: string, code: string, type: string) =>
  dialect === 'chat'
    ? `data: ${JSON.stringify({ error: { message, type, param: null, code } })}\n\n`
    : `event: error\ndata: ${JSON.stringify({ type: 'error', code, message, param: null })}\n\n`;

export async function pipeStream(
  ctx: RelayContext,
  request: RelayRequest,
  reply: RelayReply,
  input: StreamInput,
  response: UpstreamResponse,
  outcome: Outcome,
  control: StreamControl,
): Promise<StreamResult> {
  const isChat = control.dialect === 'chat';
  const clientAskedUsage =
    isChat && isRecord(input.body.stream_options) && input.body.stream_options.include_usage === true;
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
    raw.writeHead(200, { ...(reply.getHeaders() as Record<string, string>), ...SSE_HEAD });
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

  /** One chat/completions chunk; returns false to stop the stream. */
  const handleChat = (data: string): boolean => {
    // While the head is held the first output is looked for in every chunk; once it is out (from the start
    // when nothing is held) a plain chunk is not read.
    const plain = committed && filter === undefined ? plainChunk(data, clientAskedUsage) : undefined;
    if (plain !== undefined) {
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
      write(`data: ${data}\n\n`);
      return true;
    }
    if (!isRecord(chunk)) {
      write(`data: ${data}\n\n`);
      return true;
    }
    const usage = normaliseOpenAiUsage(chunk.usage);
    if (hasUsage(usage)) {
      upstreamUsage = usage;
      // The upstream's count is the bill: what was kept unread need not be counted.
      deferred.length = 0;
      deferredSize = 0;
    } else if (deferred.length > 0) readDeferred();
    last = chunk;
    let changed = false;
    const choices = Array.isArray(chunk.choices) ? chunk.choices : [];
    for (const choice of choices) {
      if (!isRecord(choice)) continue;
      const index = typeof choice.index === 'number' ? choice.index : 0;
      const ended = choice.finish_reason !== null && choice.finish_reason !== undefined;
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
    if (clientAskedUsage || !('usage' in chunk)) {
      write(`data: ${changed ? JSON.stringify(chunk) : data}\n\n`);
      return true;
    }
    // The client did not ask for usage: the usage-only chunk is dropped, and `usage: null` fields removed.
    if (choices.length === 0 && chunk.usage !== null) return true;
    const { usage: _hidden, ...visible } = chunk;
    write(`data: ${JSON.stringify(visible)}\n\n`);
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
    write(frame(event.event, changed ? JSON.stringify(payload) : event.data));
    return true;
  };

  const handle = (event: SseEvent): boolean => {
    if (event.data === DONE) return true;
    frtMs ??= performance.now() - outcome.startedAt;
    return isChat ? handleChat(event.data) : handleResponses(event);
  };

  let cutOff = false;
  let timedOut = false;
  try {
    let going = true;
    reading: for await (const piece of response.body) {
      for (const event of parser.push(piece)) {
        going = handle(event);
        if (!going) break reading;
      }
      // When the body's end came with this piece, what it produced goes out with the end of the answer, in
      // one write; otherwise it goes out now (an upstream may stay open after its end marker).
      if (!response.body.ended) await flushOut();
    }
    if (going) for (const event of parser.end()) if (!handle(event)) break;
  } catch (error) {
    const failure = toUpstreamFailure(error);
    if (!committed && control.firstTokenTimedOut()) {
      clearTimeout(pingTimer);
      return { kind: 'retry', reason: 'first-token-timeout' };
    }
    cutOff = true;
    timedOut = failure.kind === 'timeout';
    if (failure.kind !== 'aborted')
      request.log.warn({ channelId: outcome.channelId, kind: failure.kind }, 'upstream stream broke');
  }

  if (!committed && !sawOutput && upstreamUsage === undefined && control.retryEmpty && !cutOff) {
    return { kind: 'retry', reason: 'empty-response' };
  }
  const clientThere = !input.clientGone.aborted;
  // Also when the client left: the reply is taken over so Fastify does not answer it again.
  commit();
  try {
    if (clientThere && filter && stoppedFor === undefined) {
      // Text still held back by the sensitive-word carry (a choice that never sent its last chunk).
      for (const index of filter.pending()) {
        const rest = filtered(filter.flush(index));
        if (rest === undefined) break;
        if (rest === '') continue;
        write(isChat ? heldChatChunk(last, index, rest) : heldResponsesDelta(index, rest));
      }
    }
    // Without usage from the upstream, the chunks passed on unread are counted now.
    if (!hasUsage(upstreamUsage)) readDeferred();
    const usage: NormalisedUsage = hasUsage(upstreamUsage)
      ? upstreamUsage
      : {
          ...EMPTY_USAGE,
          promptTokens: input.promptTokens,
          completionTokens: counter.total(),
          source: 'counted',
        };
    if (clientThere && clientAskedUsage && upstreamUsage === undefined && stoppedFor === undefined) {
      const synthetic = {
        id: last.id ?? `chatcmpl-${request.id}`,
        object: last.object ?? 'chat.completion.chunk',
        created: last.created ?? Math.floor(Date.now() / 1000),
        model: last.model ?? outcome.upstreamModel,
        choices: [],
        usage: toOpenAiUsage(usage),
      };
      write(`data: ${JSON.stringify(synthetic)}\n\n`);
    }
    if (clientThere && stoppedFor !== undefined) {
      const error = sensitiveCompletionError();
      write(errorEvent(control.dialect, error.message, String(error.code), error.type));
    } else if (clientThere && timedOut) {
      write(
        errorEvent(
          control.dialect,
          `the upstream sent nothing for ${control.streamTimeoutSeconds} s; the answer is cut off`,
          'stream_timeout',
          'upstream_error',
        ),
      );
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
        write(`: ${QUOTA_HEADER}: ${charged}\n\n`);
        if (isChat) write(`data: ${DONE}\n\n`);
      }
    }
  } finally {
    clearTimeout(pingTimer);
    if (committed && !raw.writableEnded) raw.end(raw.destroyed ? undefined : out);
  }
  if (cutOff)
    request.log.info({ channelId: outcome.channelId }, 'stream ended early; billed what was produced');
  if (stoppedFor !== undefined)
    request.log.warn(
      { channelId: outcome.channelId, words: stoppedFor },
      'answer stopped on sensitive words',
    );
  return { kind: 'done' };
}
