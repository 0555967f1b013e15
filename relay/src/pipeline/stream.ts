/**
 * Relays a streamed answer (reference §4.4) event by event; memory is one SSE event, the incremental token
 * counter and the sensitive-word carry. The upstream is read one of three ways: OpenAI chat/completions chunks
 * (stream-chat.ts) and Responses API events (stream-responses.ts) when the client speaks OpenAI too, read in
 * place; or any other format through its adapter's decoder into canonical chat chunks, which the client's ingress
 * encodes (stream-decoded.ts). Every frame goes out through the relay's one SSE writer (../sse.ts: the held head,
 * pings, backpressure); this file runs the loop, and ends and settles the answer.
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

import { settle } from '../books/settle.ts';
import type { NormalisedUsage, RelayError, StreamEncoder } from '../contract.ts';
import type { AttemptFailure } from '../errors.ts';
import type { StreamDecoder } from '../formats/format.ts';
import { EMPTY_USAGE, hasUsage } from '../metering/usage.ts';
import { createSseParser, createSseWriter, formatSseComment } from '../sse.ts';
import { toUpstreamFailure, type UpstreamFailure } from '../upstream/client.ts';
import type { Redactor } from '../upstream/redact.ts';
import type { UpstreamAnswer } from './answer.ts';
import { QUOTA_HEADER, type RelayContext } from './context.ts';
import type { HeldExchange } from './exchange.ts';
import { sensitiveCompletionError } from './sensitive-words.ts';
import { createChatReader } from './stream-chat.ts';
import { createDecodedReader } from './stream-decoded.ts';
import { createResponsesReader } from './stream-responses.ts';
import { type StreamReader, StreamState } from './stream-state.ts';

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
  /** Send nothing until the first output (the attempt may still be retried elsewhere). */
  readonly holdHead: boolean;
  /** Called once, at the first output (stops the first-token timer). */
  onFirstOutput(): void;
  /** Whether the attempt was aborted by the first-token timer. */
  firstTokenTimedOut(): boolean;
  /** Keep-alive interval; 0 = none. */
  readonly pingMs: number;
  readonly streamTimeoutSeconds: number;
}

export type StreamResult =
  | { readonly kind: 'done' }
  | { readonly kind: 'retry'; readonly reason: AttemptFailure };

/** How a stream ended, as the consume log's `other.stream_end` says when it is not `complete`. */
export type StreamEnding = 'complete' | 'client_gone' | 'cut_off' | 'timeout' | 'upstream_error' | 'stopped';

export async function pipeStream(
  ctx: RelayContext,
  exchange: HeldExchange,
  answer: UpstreamAnswer,
  control: StreamControl,
): Promise<StreamResult> {
  const { reading, encoder } = control;
  const { response } = answer;
  const writer = createSseWriter(exchange.reply, {
    contentType: encoder.contentType,
    pingMs: control.pingMs,
    onOpen: (raw) => ctx.metrics.streamStarted(raw),
  });
  if (!control.holdHead) writer.open();
  const state = new StreamState({
    model: exchange.prepared.model,
    check: answer.completionCheck,
    writer,
    encoder,
    redactor: answer.redactor,
    startedAt: answer.outcome.startedAt,
    onFirstOutput: control.onFirstOutput,
    capture: exchange.capture,
  });
  const body = exchange.prepared.payload.kind === 'json' ? exchange.prepared.payload.body : {};
  const reader =
    reading.kind === 'chat'
      ? createChatReader(state, body)
      : reading.kind === 'responses'
        ? createResponsesReader(state)
        : createDecodedReader(state, reading.decoder, reading.passUnread);

  const parser = createSseParser();
  let failure: UpstreamFailure | undefined;
  try {
    let going = true;
    receiving: for await (const piece of response.body) {
      for (const event of parser.push(piece)) {
        going = reader.read(event);
        if (!going) break receiving;
      }
      // When the body's end came with this piece, what it produced goes out with the end of the answer, in
      // one write; otherwise it goes out now (an upstream may stay open after its end marker).
      if (!response.body.ended) await writer.flush();
    }
    if (going) for (const event of parser.end()) if (!reader.read(event)) break;
  } catch (error) {
    failure = toUpstreamFailure(error);
    if (!writer.isOpen && control.firstTokenTimedOut()) {
      writer.stop();
      return { kind: 'retry', reason: 'first-token-timeout' };
    }
    if (failure.kind !== 'aborted')
      exchange.request.log.warn(
        { channelId: answer.outcome.channelId, kind: failure.kind },
        'upstream stream broke',
      );
  }
  reader.ended?.();

  const clientThere = !exchange.clientGone.signal.aborted;
  const ending = endingOf(state, clientThere, failure);
  if (
    !writer.isOpen &&
    !state.sawOutput &&
    !hasUsage(state.upstreamUsage) &&
    answer.retryEmpty &&
    (ending === 'complete' || ending === 'cut_off') &&
    failure === undefined
  ) {
    return { kind: 'retry', reason: 'empty-response' };
  }
  // Also when the client left: the reply is taken over so Fastify does not answer it again.
  writer.open();
  try {
    await endStream(ctx, exchange, answer, { state, reader, control, ending, clientThere });
  } finally {
    writer.end();
  }
  const { channelId } = answer.outcome;
  if (ending !== 'complete' && ending !== 'stopped')
    exchange.request.log.info(
      { channelId, ending, kind: failure?.kind },
      'stream ended early; billed what was produced',
    );
  if (state.stoppedFor !== undefined)
    exchange.request.log.warn({ channelId, words: state.stoppedFor }, 'answer stopped on sensitive words');
  return { kind: 'done' };
}

/** How the answer ended; anything but `complete` (and a sensitive-word stop) is an interrupted answer. */
function endingOf(
  state: StreamState,
  clientThere: boolean,
  failure: UpstreamFailure | undefined,
): StreamEnding {
  if (!clientThere) return 'client_gone';
  if (state.stoppedFor !== undefined) return 'stopped';
  if (state.upstreamError !== undefined) return 'upstream_error';
  if (failure?.kind === 'timeout') return 'timeout';
  return failure !== undefined || !state.finished ? 'cut_off' : 'complete';
}

interface Ending {
  readonly state: StreamState;
  readonly reader: StreamReader;
  readonly control: StreamControl;
  readonly ending: StreamEnding;
  readonly clientThere: boolean;
}

/**
 * The end of the answer: text the sensitive-word carry still holds, the closing events or the error event, the
 * settlement with the usage (the upstream's, or counted), the quota comment and the end marker.
 */
async function endStream(
  ctx: RelayContext,
  exchange: HeldExchange,
  answer: UpstreamAnswer,
  { state, reader, control, ending, clientThere }: Ending,
): Promise<void> {
  const { writer, filter, upstreamUsage } = state;
  const { encoder } = control;
  if (clientThere && filter && state.stoppedFor === undefined) {
    // Text still held back by the sensitive-word carry (a choice that never sent its last chunk).
    for (const index of filter.pending()) {
      const rest = state.filtered(filter.flush(index));
      if (rest === undefined) break;
      if (rest !== '') writer.write(reader.heldFrame(index, rest));
    }
  }
  reader.countUnread?.();
  const usage = usageOf(state, ending, exchange.prepared.promptTokens);
  const interrupted = ending === 'upstream_error' || ending === 'timeout' || ending === 'cut_off';
  if (clientThere) {
    if (state.stoppedFor !== undefined) writer.write(encoder.error(sensitiveCompletionError()));
    else if (interrupted)
      writer.write(
        encoder.error(
          endingError(ending, state.upstreamError, control.streamTimeoutSeconds, answer.redactor),
        ),
      );
    else if (reader.writesEnd)
      writer.write(encoder.end(usage, hasUsage(upstreamUsage) && control.reading.kind === 'chat'));
  }
  if (ending === 'complete' && exchange.stored) {
    // Kept as the client got it (docs/adr/0051): the upstream's last `response`, or the one the encoder wrote.
    const whole = control.reading.kind === 'responses' ? state.last : encoder.answer?.();
    if (whole) exchange.stored.answered(whole, answer.outcome.channelId, answer.conversion !== undefined);
  }
  let charged = 0;
  try {
    charged = await settle(ctx, exchange.request, exchange.caller, exchange.billing, {
      ...answer.outcome,
      usage,
      isStream: true,
      frtMs: state.frtMs,
      ...(ending === 'complete'
        ? {}
        : { note: ENDING_NOTES[ending], other: { ...answer.outcome.other, stream_end: ending } }),
    });
  } finally {
    if (clientThere) {
      if (encoder.quotaComment) writer.write(formatSseComment(`${QUOTA_HEADER}: ${charged}`));
      // The end marker says the answer is whole: an interrupted one goes without it.
      if (!interrupted) writer.write(encoder.done);
    }
  }
}

/** The bill's usage: the upstream's when it reported one, else the prompt and the output counted. */
function usageOf(state: StreamState, ending: StreamEnding, promptTokens: number): NormalisedUsage {
  const { upstreamUsage } = state;
  const counted = state.counter.total();
  if (!hasUsage(upstreamUsage))
    return { ...EMPTY_USAGE, promptTokens, completionTokens: counted, source: 'counted' };
  if (ending === 'complete' || ending === 'stopped') return upstreamUsage;
  // An interrupted stream may have reported only its start (Anthropic's message_start): the output produced
  // since is counted.
  return { ...upstreamUsage, completionTokens: Math.max(upstreamUsage.completionTokens, counted) };
}

const ENDING_NOTES: Readonly<Record<Exclude<StreamEnding, 'complete'>, string>> = {
  client_gone: 'stream left by the client',
  cut_off: 'stream cut off by the upstream',
  timeout: 'stream timed out',
  upstream_error: 'stream ended by an upstream error',
  stopped: 'stream stopped on sensitive words',
};

/** An error of the relay's own in a stream (never retried, shown as it is). */
const streamError = (message: string, code: string): RelayError => ({
  status: 502,
  message,
  type: 'upstream_error',
  code,
  param: null,
  isLocal: true,
});

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
    );
  return streamError('the upstream ended the stream before the answer was complete', 'stream_cut_off');
}
