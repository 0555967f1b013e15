import { isRecord } from '@turnpike/core/json';
/**
 * A small server-sent events reader (https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation)
 * for the playground's `fetch` stream, and the reading of OpenAI chat-completion chunks.
 *
 * `EventSource` cannot POST a body, so the stream is read by hand: bytes are decoded as UTF-8 across reads, lines
 * end in LF, CRLF or CR (possibly split between two reads), `:` lines are comments (`: PING`, the quota comment),
 * `data:` lines accumulate until a blank line dispatches the event.
 */

/** One dispatched event: its type (`message` unless an `event:` line named another) and its data. */
export interface SseEvent {
  event: string;
  data: string;
}

export interface SseParser {
  /** Feeds decoded text; returns the events it completed. */
  push(text: string): SseEvent[];
  /** The stream ended: the last line and an event without its closing blank line still count. */
  end(): SseEvent[];
}

export function createSseParser(): SseParser {
  let buffer = '';
  let data: string[] = [];
  let event = '';

  const dispatch = (out: SseEvent[]) => {
    if (data.length > 0) out.push({ event: event || 'message', data: data.join('\n') });
    data = [];
    event = '';
  };

  const line = (text: string, out: SseEvent[]) => {
    if (text === '') return dispatch(out);
    if (text.startsWith(':')) return; // a comment: keep-alive pings, the charged-quota note
    const colon = text.indexOf(':');
    const field = colon === -1 ? text : text.slice(0, colon);
    let value = colon === -1 ? '' : text.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') data.push(value);
    else if (field === 'event') event = value;
    // `id` and `retry` mean nothing to a one-shot fetch
  };

  return {
    push(text) {
      buffer += text;
      const out: SseEvent[] = [];
      let start = 0;
      for (let i = 0; i < buffer.length; i++) {
        const ch = buffer[i];
        if (ch !== '\n' && ch !== '\r') continue;
        // a CR at the very end may be the first half of a CRLF split across reads: wait for the next read
        if (ch === '\r' && i === buffer.length - 1) break;
        line(buffer.slice(start, i), out);
        if (ch === '\r' && buffer[i + 1] === '\n') i++;
        start = i + 1;
      }
      buffer = buffer.slice(start);
      return out;
    },
    end() {
      const out: SseEvent[] = [];
      const rest = buffer.replace(/\r$/, '');
      buffer = '';
      if (rest) line(rest, out);
      dispatch(out);
      return out;
    },
  };
}

/**
 * The events of a response body, as they arrive. Leaving the loop early, or aborting `signal`, cancels the body
 * (the loop then simply ends; the caller checks `signal.aborted`).
 */
export async function* readSse(
  body: ReadableStream<Uint8Array>,
  signal?: AbortSignal,
): AsyncGenerator<SseEvent> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const parser = createSseParser();
  let finished = false;
  const cancel = () => void reader.cancel().catch(() => undefined);
  signal?.addEventListener('abort', cancel, { once: true });
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      yield* parser.push(decoder.decode(value, { stream: true }));
    }
    finished = true;
    yield* parser.push(decoder.decode());
    yield* parser.end();
  } finally {
    signal?.removeEventListener('abort', cancel);
    if (!finished) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}

/** What one `data:` payload of a chat-completion stream means for the reply. */
export type ChatChunk =
  | { kind: 'delta'; text: string }
  | { kind: 'done' }
  | { kind: 'error'; message: string }
  | { kind: 'none' };

/** The text of an OpenAI-style error (`{ error: { message } }`, `{ error: "..." }`) or an envelope's `message`. */
export function errorMessageOf(body: unknown): string | null {
  if (!isRecord(body)) return null;
  const { error } = body;
  if (typeof error === 'string' && error) return error;
  if (isRecord(error) && typeof error.message === 'string' && error.message) return error.message;
  if (body.success === false && typeof body.message === 'string' && body.message) return body.message;
  return null;
}

/** Reads one payload: `[DONE]`, a chunk with `choices[0].delta.content`, or an error chunk. */
export function readChatChunk(data: string): ChatChunk {
  if (data.trim() === '[DONE]') return { kind: 'done' };
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    return { kind: 'none' }; // not JSON: nothing to show
  }
  const error = errorMessageOf(parsed);
  if (error) return { kind: 'error', message: error };
  if (!isRecord(parsed) || !Array.isArray(parsed.choices)) return { kind: 'none' };
  const choice: unknown = parsed.choices[0];
  if (!isRecord(choice)) return { kind: 'none' };
  const delta = choice.delta;
  if (isRecord(delta) && typeof delta.content === 'string' && delta.content)
    return { kind: 'delta', text: delta.content };
  // a legacy completions chunk, or a non-streamed answer
  if (typeof choice.text === 'string' && choice.text) return { kind: 'delta', text: choice.text };
  const message = choice.message;
  if (isRecord(message) && typeof message.content === 'string' && message.content)
    return { kind: 'delta', text: message.content };
  return { kind: 'none' };
}
