/**
 * The one server-sent-events parser and writer of the relay (WHATWG HTML "Server-sent events" §9.2.6 wire format).
 *
 * The writer (`createSseWriter`) answers every stream of the relay: the held head, the keep-alive pings and the
 * socket's backpressure are its business alone; the frame builders (`formatSse*`) are what every format's encoder
 * writes its events with.
 *
 * The parser is incremental: feed it upstream chunks as they arrive, split anywhere (inside a line, inside a
 * CRLF pair, inside a multi-byte UTF-8 character), and it returns the events completed so far. Memory is bounded
 * by one event: a line or event larger than `maxEventBytes` throws instead of growing without end.
 */

import type { ServerResponse } from 'node:http';
import type { RelayReply } from './contract.ts';

/** One dispatched event. `data` lines are joined with "\n", as the standard says. */
export interface SseEvent {
  /** The `event:` field; undefined for the default "message" type (all OpenAI chunks). */
  readonly event: string | undefined;
  readonly data: string;
  /** The `id:` field of this event, if it had one. */
  readonly id: string | undefined;
  /** The `retry:` field in milliseconds, if it had a valid one. */
  readonly retry: number | undefined;
}

/** The terminating sentinel of OpenAI-style streams (`data: [DONE]`). */
export const DONE = '[DONE]';

export const isDoneEvent = (event: SseEvent): boolean => event.data === DONE;

/** An event's data as a JSON object, or undefined when it is not one (a keep-alive comment, `[DONE]`, a cut line). */
export function eventRecord(event: SseEvent): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(event.data);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

export interface SseParserOptions {
  /** Largest line or event accepted, in UTF-16 code units (about bytes for ASCII); default 64 MiB. */
  readonly maxEventBytes?: number;
  /** Called for each comment line (`: PING`) — upstream keep-alives; by default ignored. */
  readonly onComment?: (text: string) => void;
}

export interface SseParser {
  /** Feeds the next chunk; returns the events it completed, in order. */
  push(chunk: Uint8Array | string): SseEvent[];
  /**
   * Ends the stream. Unlike a browser, an event still waiting for its blank line is delivered rather than
   * dropped: some upstreams close the connection straight after `data: [DONE]\n`, and dropping the usage chunk
   * before it would lose billing data.
   */
  end(): SseEvent[];
}

/** Creates an incremental SSE parser. */
export function createSseParser(options: SseParserOptions = {}): SseParser {
  return new IncrementalSseParser(options);
}

/** The parser's state, an object rather than closures (a process holds one per open stream). */
class IncrementalSseParser implements SseParser {
  private readonly maxEventBytes: number;
  private readonly onComment: ((text: string) => void) | undefined;
  private readonly decoder = new TextDecoder('utf-8');
  private pending = '';
  private isFirstLine = true;
  private pendingCr = false;
  // The event's data lines so far, joined with "\n" (undefined: none yet).
  private data: string | undefined = undefined;
  private eventType: string | undefined = undefined;
  private eventId: string | undefined = undefined;
  private retry: number | undefined = undefined;
  private hasField = false;

  constructor(options: SseParserOptions) {
    this.maxEventBytes = options.maxEventBytes ?? 64 * 1024 * 1024;
    this.onComment = options.onComment;
  }

  push(chunk: Uint8Array | string): SseEvent[] {
    const out: SseEvent[] = [];
    this.consume(typeof chunk === 'string' ? chunk : this.decoder.decode(chunk, { stream: true }), out);
    return out;
  }

  end(): SseEvent[] {
    const out: SseEvent[] = [];
    const rest = this.decoder.decode();
    if (rest !== '') this.consume(rest, out);
    if (this.pending !== '') {
      this.processLine(this.pending, out);
      this.pending = '';
    }
    if (this.hasField) this.dispatch(out);
    return out;
  }

  private dispatch(out: SseEvent[]): void {
    const { data } = this;
    if (data !== undefined) out.push({ event: this.eventType, data, id: this.eventId, retry: this.retry });
    this.data = undefined;
    this.eventType = undefined;
    this.eventId = undefined;
    this.retry = undefined;
    this.hasField = false;
  }

  private addData(value: string): void {
    this.data = this.data === undefined ? value : `${this.data}\n${value}`;
    if (this.data.length > this.maxEventBytes)
      throw new RangeError(`SSE event larger than ${this.maxEventBytes} bytes`);
    this.hasField = true;
  }

  private processLine(line: string, out: SseEvent[]): void {
    if (this.isFirstLine) {
      this.isFirstLine = false;
      if (line.charCodeAt(0) === 0xfeff) line = line.slice(1);
    }
    if (line === '') {
      this.dispatch(out);
      return;
    }
    // A data line, by far the most common, is read without splitting it into field and value.
    if (line.startsWith('data:')) {
      this.addData(line.charCodeAt(5) === 32 ? line.slice(6) : line.slice(5));
      return;
    }
    if (line.charCodeAt(0) === 58 /* : */) {
      this.onComment?.(line.slice(line.charCodeAt(1) === 32 ? 2 : 1));
      return;
    }
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    this.hasField = true;
    switch (field) {
      case 'data':
        this.addData(value);
        break;
      case 'event':
        this.eventType = value;
        break;
      case 'id':
        if (!value.includes('\0')) this.eventId = value;
        break;
      case 'retry':
        if (/^\d+$/.test(value)) this.retry = Number(value);
        break;
      default:
        // Unknown fields are ignored, as the standard says.
        break;
    }
  }

  private consume(text: string, out: SseEvent[]): void {
    let start = 0;
    if (this.pendingCr) {
      // A CR ended the previous chunk; an LF opening this one belongs to it.
      this.pendingCr = false;
      if (text.charCodeAt(0) === 10) start = 1;
    }
    const length = text.length;
    if (text.indexOf('\r', start) === -1) {
      // Lines end in LF alone (every upstream we know): found by the engine's own search.
      for (let index = text.indexOf('\n', start); index !== -1; index = text.indexOf('\n', start)) {
        const line = this.pending === '' ? text.slice(start, index) : this.pending + text.slice(start, index);
        this.pending = '';
        this.processLine(line, out);
        start = index + 1;
      }
    } else {
      let index = start;
      while (index < length) {
        const code = text.charCodeAt(index);
        if (code === 10 || code === 13) {
          const line =
            this.pending === '' ? text.slice(start, index) : this.pending + text.slice(start, index);
          this.pending = '';
          this.processLine(line, out);
          if (code === 13) {
            if (index + 1 === length) {
              this.pendingCr = true;
            } else if (text.charCodeAt(index + 1) === 10) {
              index += 1;
            }
          }
          start = index + 1;
        }
        index += 1;
      }
    }
    if (start < length) {
      this.pending += text.slice(start);
      if (this.pending.length > this.maxEventBytes)
        throw new RangeError(`SSE line longer than ${this.maxEventBytes} bytes`);
    }
  }
}

/**
 * Response headers of every stream the relay answers (no compression, no proxy buffering); the one declaration,
 * a format whose streams are not server-sent events (Gemini's JSON arrays) overrides only the content type.
 */
const SSE_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
};

/** `data: [DONE]` and its blank line. */
export const SSE_DONE_FRAME = 'data: [DONE]\n\n';

/** One event as wire text. Multi-line data becomes several `data:` lines, so any string round-trips. */
export function formatSseEvent(data: string, options?: { event?: string | undefined; id?: string }): string {
  let head = '';
  if (options?.event !== undefined) head += `event: ${assertSingleLine(options.event)}\n`;
  if (options?.id !== undefined) head += `id: ${assertSingleLine(options.id)}\n`;
  // One line of data (every JSON chunk): one template, no split.
  if (data.indexOf('\n') === -1 && data.indexOf('\r') === -1) return `${head}data: ${data}\n\n`;
  let frame = head;
  for (const line of data.split(/\r\n|\r|\n/)) frame += `data: ${line}\n`;
  return `${frame}\n`;
}

/** A data-only event carrying JSON: `data: {...}\n\n` (JSON.stringify never emits a raw newline). */
export const formatSseJson = (value: unknown): string => `data: ${JSON.stringify(value)}\n\n`;

/** A named event carrying JSON: `event: <name>\ndata: {...}\n\n`. */
export const formatSseNamedJson = (event: string, value: unknown): string =>
  `event: ${event}\ndata: ${JSON.stringify(value)}\n\n`;

/** A comment frame (`: PING\n\n`): ignored by clients, keeps proxies from closing an idle stream. */
export const formatSseComment = (text: string): string => `: ${assertSingleLine(text)}\n\n`;

function assertSingleLine(value: string): string {
  if (/[\r\n]/.test(value)) throw new RangeError('an SSE field value cannot contain a line break');
  return value;
}

const PING_FRAME = formatSseComment('PING');

export interface SseWriterOptions {
  /** The stream's content type when it is not `text/event-stream` (Gemini's JSON-array streams). */
  readonly contentType?: string | undefined;
  /** Keep-alive: a `: PING` comment whenever nothing was written for this long, once the head is out; 0 = none. */
  readonly pingMs: number;
  /** Called once, when the head is written (the active-streams gauge). */
  onOpen?(raw: ServerResponse): void;
}

/**
 * The one writer of every stream the relay answers. Frames are gathered and written once per upstream piece
 * (`flush`: one syscall per piece, not per event), waiting for the socket to drain when it is full
 * (backpressure: a slow client slows the upstream read, and memory stays one piece). Until `open`, nothing is
 * sent: the head is held (the attempt may still be given up for another channel) and frames wait with it.
 */
export interface SseWriter {
  /** Whether the head is out (the answer is committed to this attempt). */
  readonly isOpen: boolean;
  /** Writes the head (the reply's headers so far with the stream's) and lets held frames go; once only. */
  open(): void;
  /** Adds frame text, sent at the next `flush` (or `end`). */
  write(frame: string): void;
  /** Sends what was written since the last flush, and waits while the socket is full. */
  flush(): Promise<void>;
  /** Sends the rest with the end of the response (if the head is out), and stops the pings. */
  end(): void;
  /** Stops the pings without ending (the attempt is given up before its head went out). */
  stop(): void;
}

/** A stream writer over a reply the pipeline takes over (`hijack`) when the head goes out. */
export function createSseWriter(reply: RelayReply, options: SseWriterOptions): SseWriter {
  return new ReplySseWriter(reply, options);
}

/**
 * The writer's state, an object rather than closures (a process holds one per open stream). The ping timer is
 * made once, when the head goes out, and re-armed by every write rather than made again.
 */
class ReplySseWriter implements SseWriter {
  private readonly reply: RelayReply;
  private readonly raw: ServerResponse;
  private readonly options: SseWriterOptions;
  private headSent = false;
  private held: string[] = [];
  private out = '';
  private pingTimer: NodeJS.Timeout | undefined = undefined;

  constructor(reply: RelayReply, options: SseWriterOptions) {
    this.reply = reply;
    this.raw = reply.raw;
    this.options = options;
  }

  get isOpen(): boolean {
    return this.headSent;
  }

  open(): void {
    if (this.headSent) return;
    this.headSent = true;
    const { reply, raw, options } = this;
    reply.hijack();
    if (raw.destroyed) return;
    // The reply's headers so far (the request id, cross-origin access) go with the stream's own.
    raw.writeHead(200, {
      ...(reply.getHeaders() as Record<string, string>),
      ...SSE_HEADERS,
      ...(options.contentType ? { 'content-type': options.contentType } : {}),
    });
    options.onOpen?.(raw);
    if (this.held.length > 0) this.out = this.held.join('') + this.out;
    this.held = [];
    if (options.pingMs > 0) {
      this.pingTimer = setTimeout(ping, options.pingMs, this);
      this.pingTimer.unref();
    }
  }

  write(frame: string): void {
    if (this.headSent) this.out += frame;
    else this.held.push(frame);
  }

  async flush(): Promise<void> {
    if (this.out === '') return;
    const text = this.out;
    this.out = '';
    const { raw } = this;
    if (raw.destroyed || raw.writableEnded) return;
    this.pingTimer?.refresh();
    if (!raw.write(text)) await drained(raw);
  }

  end(): void {
    clearTimeout(this.pingTimer);
    const { raw } = this;
    if (this.headSent && !raw.writableEnded) raw.end(raw.destroyed ? undefined : this.out);
    this.out = '';
  }

  stop(): void {
    clearTimeout(this.pingTimer);
  }

  /** The keep-alive: a ping, and the timer armed again. */
  ping(): void {
    const { raw } = this;
    if (raw.destroyed || raw.writableEnded) return;
    raw.write(PING_FRAME);
    this.pingTimer?.refresh();
  }
}

/** The ping timer's callback: one function for every writer (the writer is its argument). */
function ping(writer: ReplySseWriter): void {
  writer.ping();
}

/** Resolves once the socket drained (or closed). */
function drained(raw: ServerResponse): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => {
      raw.off('drain', done);
      raw.off('close', done);
      resolve();
    };
    raw.on('drain', done);
    raw.on('close', done);
  });
}
