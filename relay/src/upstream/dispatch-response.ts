/**
 * One upstream exchange on undici's handler protocol (`dispatcher.dispatch(options, handler)`), with no stream
 * between the socket and the relay: the response head is handed over as it arrives, then the body is read one of
 * three ways — whole, as text up to a limit (an error body, a JSON answer); dropped; or piece by piece by one
 * consumer, the socket paused while that consumer is busy.
 *
 * The timeouts are kept here rather than by undici (its own may not fire while it deems the request still being
 * written, and cannot be raised per request): the wait for the head, and the silence between two pieces while
 * someone waits for the body. Every way an exchange ends early (the caller's signal, a timeout, a read that stops
 * before the end) aborts the request through undici's controller, so a connection is never reused mid-body.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import type { UpstreamBody } from './client.ts';
import { toUpstreamFailure, UpstreamFailure } from './failure.ts';

/** Default cap for reading an error body, and the most of an unread body dropped to keep its connection. */
export const ERROR_BODY_LIMIT = 64 * 1024;

/**
 * Bytes held for a consumer that is not reading before the socket is paused (what undici's own body stream holds):
 * a consumer a little behind does not pause and resume the socket at every piece.
 */
const HIGH_WATER_BYTES = 64 * 1024;

const DONE: IteratorResult<Uint8Array> = Object.freeze({ value: undefined, done: true });

/** How the body is read: not yet, piece by piece, whole as text, or dropped. */
type Reading = 'unread' | 'pieces' | 'text' | 'drop';

/** Whoever waits on the exchange: for the head, the next piece, the text, or the end of a drop. */
interface Waiter {
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

export interface ExchangeOptions {
  /** The caller's signal (the client gone): aborts the exchange at any point. */
  readonly signal?: AbortSignal | undefined;
  /** The request body when it is a stream: destroyed when the exchange fails (a spooled upload's file). */
  readonly body?: unknown;
  /** Longest wait for the response head (0 = none). */
  readonly headersTimeoutMs: number;
  /** Longest silence between two pieces while someone waits for the body (0 = none). */
  readonly bodyTimeoutMs: number;
}

export class DispatchResponse implements Dispatcher.DispatchHandler, UpstreamBody, AsyncIterator<Uint8Array> {
  status = 0;
  headers: IncomingHttpHeaders = {};
  /** Settles once the response head arrived; rejects with an {@link UpstreamFailure} before it. */
  readonly head: Promise<void>;

  /** The upstream sent the body's end, or the consumer stopped reading. */
  private bodyEnded = false;
  private readonly signal: AbortSignal | undefined;
  private readonly requestBody: Readable | undefined;
  private readonly idleMs: number;
  private controller: Dispatcher.DispatchController | null = null;
  private timer: NodeJS.Timeout | undefined;
  private headArrived = false;
  /** No callback of undici's will follow: the body ended, or the request failed or was aborted. */
  private settled = false;
  private failure: UpstreamFailure | undefined;
  private reading: Reading = 'unread';
  private waiter: Waiter | undefined;
  private readonly queue: Buffer[] = [];
  /** Bytes in the queue (for a drop: bytes seen). */
  private queued = 0;
  /** The most of the body read as text. */
  private limit = ERROR_BODY_LIMIT;
  private deliverLater: (() => void) | undefined;
  private scheduled = false;

  constructor(options: ExchangeOptions) {
    this.idleMs = options.bodyTimeoutMs;
    this.requestBody = isStream(options.body) ? options.body : undefined;
    this.head = new Promise<void>((resolve, reject) => {
      this.waiter = { resolve, reject };
    });
    if (options.headersTimeoutMs > 0) this.timer = setTimeout(timeUp, options.headersTimeoutMs, this);
    const { signal } = options;
    this.signal = signal;
    if (signal?.aborted) this.handleEvent();
    else signal?.addEventListener('abort', this);
  }

  /**
   * Whether the upstream has sent the body's end (once reading began): every piece is handed over or waiting to
   * be. Pieces that arrive together with the end are handed over after it is known.
   */
  get ended(): boolean {
    return this.bodyEnded && this.reading !== 'unread';
  }

  // --- undici's side ---------------------------------------------------------------------------------------

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    // Failed while waiting for a connection: the request goes no further.
    if (this.failure !== undefined) controller.abort(this.failure);
  }

  onResponseStart(
    _controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: IncomingHttpHeaders,
  ) {
    if (statusCode < 200 || this.settled) return;
    this.status = statusCode;
    this.headers = headers;
    this.headArrived = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.wake(undefined);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.settled) return;
    this.queued += chunk.length;
    // Read whole or dropped, the body has someone waiting all along: each piece restarts the idle clock.
    if (this.reading === 'text' || this.reading === 'drop') this.timer?.refresh();
    if (this.reading === 'drop') {
      if (this.queued > ERROR_BODY_LIMIT) this.stop();
      return;
    }
    this.queue.push(chunk);
    if (this.reading === 'text') {
      if (this.queued > this.limit) this.finishText();
    } else if (this.waiter === undefined) {
      if (this.queued >= HIGH_WATER_BYTES) controller.pause();
    } else if (!this.scheduled) {
      // The pieces one socket read brings are handed over together, a microtask later.
      this.scheduled = true;
      this.deliverLater ??= () => this.deliver();
      queueMicrotask(this.deliverLater);
    }
  }

  onResponseEnd(): void {
    if (this.settled) return;
    this.bodyEnded = true;
    this.finish();
    if (this.reading === 'text') this.finishText();
    else if (this.queue.length === 0) this.wake(this.reading === 'pieces' ? DONE : undefined);
  }

  onResponseError(_controller: Dispatcher.DispatchController | null, error: Error): void {
    if (this.settled) return;
    // After the consumer stopped reading, the abort that follows is no failure.
    if (!this.bodyEnded) this.failure ??= toUpstreamFailure(error);
    const failure = this.bodyEnded ? undefined : this.failure;
    this.finish();
    this.requestBody?.destroy();
    if (!this.headArrived || this.reading === 'text') this.fail(failure);
    else if (this.reading === 'drop') this.wake(undefined);
    else if (this.queue.length === 0) this.fail(failure);
  }

  /** The caller's signal fired (an object listener, so no closure per exchange). */
  handleEvent(): void {
    this.abort(toUpstreamFailure(this.signal?.reason));
  }

  /** A timer fired: the head is late, or the upstream stayed silent while someone waited for the body. */
  timeUp(): void {
    if (!this.headArrived) this.abort(new UpstreamFailure('timeout', 'upstream response timeout'));
    else if (this.waiter !== undefined) this.abort(new UpstreamFailure('timeout', 'upstream stream timeout'));
  }

  // --- the reader's side -----------------------------------------------------------------------------------

  [Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
    this.reading = 'pieces';
    return this;
  }

  next(): Promise<IteratorResult<Uint8Array>> {
    if (this.queue.length > 0) return Promise.resolve({ value: this.take(), done: false });
    if (this.failure !== undefined && this.reading !== 'drop') return Promise.reject(this.failure);
    if (this.bodyEnded) {
      clearTimeout(this.timer);
      return Promise.resolve(DONE);
    }
    return this.wait<IteratorResult<Uint8Array>>();
  }

  /** The consumer stopped early (`break`): the rest of the body is dropped with its connection. */
  return(): Promise<IteratorResult<Uint8Array>> {
    this.bodyEnded = true;
    this.reading = 'drop';
    this.queue.length = 0;
    this.stop();
    return Promise.resolve(DONE);
  }

  /** Reads at most `limit` bytes of the body as text; a longer body is cut there and its connection closed. */
  readText(limit = ERROR_BODY_LIMIT): Promise<string> {
    this.reading = 'text';
    this.limit = limit;
    if (this.bodyEnded || this.queued > limit) return Promise.resolve(this.finishText());
    if (this.failure !== undefined) return Promise.reject(this.failure);
    return this.wait<string>();
  }

  /** Drops the body: a short one is read to its end so the connection is reused, a long one closes it. */
  discard(): Promise<void> {
    this.reading = 'drop';
    this.queue.length = 0;
    if (this.settled) return Promise.resolve();
    if (this.queued > ERROR_BODY_LIMIT || Number(this.headers['content-length']) > ERROR_BODY_LIMIT) {
      this.stop();
      return Promise.resolve();
    }
    return this.wait<void>();
  }

  // --- inside ----------------------------------------------------------------------------------------------

  /** Waits for the upstream, with the idle clock running and the socket flowing. */
  private wait<T>(): Promise<T> {
    if (this.idleMs > 0 && !this.settled) {
      if (this.timer === undefined) this.timer = setTimeout(timeUp, this.idleMs, this).unref();
      else this.timer.refresh();
    }
    return new Promise<T>((resolve, reject) => {
      this.waiter = { resolve, reject };
      // May hand over pieces at once (they are delivered a microtask later), the end, or a failure.
      this.controller?.resume();
    });
  }

  private deliver() {
    this.scheduled = false;
    if (this.queue.length === 0 || this.reading !== 'pieces') return;
    this.wake({ value: this.take(), done: false });
  }

  /** Everything queued, as one piece. */
  private take(): Buffer {
    const { queue } = this;
    const piece = queue.length === 1 ? (queue[0] as Buffer) : Buffer.concat(queue, this.queued);
    queue.length = 0;
    this.queued = 0;
    return piece;
  }

  /** Hands over the text read (cut at the limit), closing the connection when the body goes on. */
  private finishText(): string {
    const size = Math.min(this.queued, this.limit);
    const text = this.queued === 0 ? '' : this.take().toString('utf8', 0, size);
    this.wake(text);
    if (!this.settled) this.stop();
    return text;
  }

  private wake(value: unknown) {
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.resolve(value);
  }

  private fail(failure: UpstreamFailure | undefined) {
    const waiter = this.waiter;
    this.waiter = undefined;
    if (failure === undefined) waiter?.resolve(DONE);
    else waiter?.reject(failure);
  }

  /** Ends the request before its end; nothing more of it is read. */
  private stop() {
    this.abort(new UpstreamFailure('aborted', 'upstream request aborted'));
  }

  private abort(failure: UpstreamFailure) {
    if (this.settled) return;
    this.failure ??= failure;
    // undici answers an abort with onResponseError at once; a request not started yet fails now, and is aborted
    // when it starts.
    if (this.controller !== null) this.controller.abort(failure);
    else this.onResponseError(null, failure);
  }

  private finish() {
    this.settled = true;
    clearTimeout(this.timer);
    this.signal?.removeEventListener('abort', this);
  }
}

function timeUp(exchange: DispatchResponse) {
  exchange.timeUp();
}

function isStream(body: unknown): body is Readable {
  return typeof (body as Readable | undefined)?.pipe === 'function';
}
