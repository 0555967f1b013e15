/**
 * Bedrock's streams come in AWS's binary event-stream framing (`application/vnd.amazon.eventstream`,
 * https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_InvokeModelWithResponseStream.html): each
 * message has headers (`:message-type`, `:event-type`, `:exception-type`) and a JSON payload, decoded here with
 * AWS's codec (`@smithy/eventstream-codec`, which checks each message's CRCs). A `chunk` event carries the model's
 * own event as base64 `bytes` (for Claude, an Anthropic Messages stream event); it is written out as that
 * event in SSE framing, so the rest of the relay reads an Anthropic stream. An exception message becomes an
 * Anthropic `error` event. Converse streams (ConverseStream) carry their events as plain JSON payloads, written out
 * with their event type as the SSE event name.
 */
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { formatSseEvent } from '../../sse.ts';
import type { UpstreamBody } from '../../upstream/client.ts';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

const sse = (event: string, data: string): Uint8Array => encoder.encode(formatSseEvent(data, { event }));

/** Anthropic's error type for a Bedrock exception in a stream. */
function errorTypeOf(exception: string): string {
  if (/throttling|serviceUnavailable|modelNotReady/i.test(exception)) return 'overloaded_error';
  if (/validation/i.test(exception)) return 'invalid_request_error';
  return 'api_error';
}

/** One decoded message as SSE bytes, or none (an event with nothing to say). */
function toSse(message: EventStreamMessage): Uint8Array | undefined {
  const header = (name: string) => {
    const value = message.headers[name]?.value;
    return typeof value === 'string' ? value : undefined;
  };
  const text = decoder.decode(message.body);
  if (header(':message-type') === 'exception' || header(':message-type') === 'error') {
    const exception = header(':exception-type') ?? header(':error-code') ?? 'internalServerException';
    let detail = text;
    try {
      const parsed = JSON.parse(text) as { message?: unknown; Message?: unknown };
      detail = String(parsed.message ?? parsed.Message ?? text);
    } catch {
      // the payload is the message itself
    }
    const body = {
      type: 'error',
      error: { type: errorTypeOf(exception), message: `${exception}: ${detail}` },
    };
    return sse('error', JSON.stringify(body));
  }
  const eventType = header(':event-type') ?? 'chunk';
  if (eventType !== 'chunk') return sse(eventType, text);
  const payload = JSON.parse(text) as { bytes?: unknown };
  if (typeof payload.bytes !== 'string') return undefined;
  const inner = Buffer.from(payload.bytes, 'base64').toString('utf8');
  const type = (JSON.parse(inner) as { type?: unknown }).type;
  return sse(typeof type === 'string' ? type : 'message', inner);
}

/** One decoded event-stream message: its headers (each a type and a value) and its payload. */
export interface EventStreamMessage {
  readonly headers: Record<string, { type: string; value: unknown }>;
  readonly body: Uint8Array;
}

/**
 * A reader of event-stream messages from pieces cut anywhere: each piece in, the whole messages it completes out.
 * Messages are cut by their length prelude (their first four bytes); the codec decodes each and checks both CRCs,
 * throwing on a mismatch.
 */
export function createEventStreamReader(): {
  push(piece: Uint8Array): EventStreamMessage[];
  readonly pending: () => number;
} {
  const codec = new EventStreamCodec(toUtf8, fromUtf8);
  let buffered: Buffer = Buffer.alloc(0);
  return {
    push(piece) {
      buffered = buffered.length === 0 ? Buffer.from(piece) : Buffer.concat([buffered, piece]);
      const out: EventStreamMessage[] = [];
      while (buffered.length >= 4) {
        const length = buffered.readUInt32BE(0);
        if (buffered.length < length) break;
        out.push(codec.decode(buffered.subarray(0, length)) as EventStreamMessage);
        buffered = buffered.subarray(length);
      }
      return out;
    },
    pending: () => buffered.length,
  };
}

/** The upstream body re-framed: AWS event-stream messages in, SSE events out, piece by piece. */
export function eventStreamToSse(body: UpstreamBody): UpstreamBody {
  const reader = createEventStreamReader();
  async function* reframe(): AsyncGenerator<Uint8Array> {
    for await (const piece of body) {
      const out: Uint8Array[] = [];
      for (const message of reader.push(piece)) {
        const frame = toSse(message);
        if (frame) out.push(frame);
      }
      if (out.length === 1) yield out[0]!;
      else if (out.length > 1) yield Buffer.concat(out);
    }
  }
  const iterator = reframe();
  return {
    [Symbol.asyncIterator]: () => iterator,
    get ended() {
      return body.ended && reader.pending() === 0;
    },
  };
}
