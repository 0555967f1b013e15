/**
 * The HTTP client for upstream providers: one undici Agent holding a keep-alive Pool per origin, with connect,
 * headers (time to the response head, i.e. time to first byte) and body (idle time between chunks) timeouts,
 * and the caller's AbortSignal (a client disconnect) cancelling the upstream request.
 *
 * Each request goes out on undici's handler protocol (dispatch-response.ts) rather than its `request()`, which wraps
 * every response in a stream: the body is handed over as the socket reads it, nothing more is buffered than a
 * consumer a little behind leaves waiting, so a streamed completion flows chunk by chunk and memory per request
 * stays bounded. Only error bodies are read whole, with a size cap.
 *
 * A channel's outbound proxy (`setting.proxy`: `http://`, `https://` or `socks5://`, credentials in the URL) gets
 * a dispatcher of its own — undici's ProxyAgent (CONNECT for https targets, absolute-form forwarding for http) or
 * Socks5ProxyAgent — made once per proxy URL and kept with its pools. The proxy URL and its credentials never
 * appear in an error message: failures are reported as the same fixed texts as direct ones.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import {
  createProxyDispatcher as createProxyAgent,
  INVALID_PROXY_MESSAGE,
  type ProxyPoolOptions,
} from '@turnpike/core/http/proxy-dispatcher';
import { Agent, type Dispatcher } from 'undici';
import { DispatchResponse } from './dispatch-response.ts';
import { UpstreamFailure } from './failure.ts';

export { ERROR_BODY_LIMIT } from './dispatch-response.ts';
export { toUpstreamFailure, UpstreamFailure, type UpstreamFailureKind } from './failure.ts';

export interface UpstreamClientOptions {
  /** Connections per origin (undici Pool size); default `CONNECTIONS_PER_ORIGIN`. */
  readonly connectionsPerOrigin?: number;
  /** Establishing the TCP/TLS connection; default 10 s. */
  readonly connectTimeoutMs?: number;
  /** From sending the request to the response head; default 300 s (0 = none). */
  readonly headersTimeoutMs?: number;
  /** Longest silence between two body chunks (`STREAMING_TIMEOUT`); default 300 s (0 = none). */
  readonly bodyTimeoutMs?: number;
  /** Idle keep-alive sockets are closed after this; default 30 s. */
  readonly keepAliveTimeoutMs?: number;
}

export interface UpstreamRequest {
  /** Full URL: `https://api.openai.com/v1/chat/completions?api-version=…`. */
  readonly url: string;
  readonly method?: 'GET' | 'POST' | 'DELETE';
  readonly headers?: Readonly<Record<string, string>>;
  /** A stream is sent as it is read (a spooled multipart upload); it can be sent once. */
  readonly body?: string | Uint8Array | Readable;
  /** Aborts the upstream request (client went away, overall deadline). */
  readonly signal?: AbortSignal;
  /** Overrides the client's defaults for this request (e.g. ×2 for reasoning models). */
  readonly headersTimeoutMs?: number;
  readonly bodyTimeoutMs?: number;
  /** The channel's outbound proxy URL (`http://`, `https://`, `socks5://`); undefined: a direct connection. */
  readonly proxy?: string | undefined;
  /** Rewrites a 200 answer as it arrives (channel settings such as `thinking_to_content`). */
  readonly rewrite?: AnswerRewrite | undefined;
}

/**
 * A rewrite of a 200 answer on its way in: a JSON answer read whole, or each `data:` payload of an event stream
 * (one state per answer, from `createStream`). Other bodies pass untouched.
 */
export interface AnswerRewrite {
  json(text: string): string;
  createStream(): (data: string) => string;
}

/** An upstream body, read once as it arrives from the socket. */
export interface UpstreamBody extends AsyncIterable<Uint8Array> {
  /**
   * Whether the upstream has sent the body's end: every piece is handed over or waiting to be, so the next
   * read answers at once. True as soon as the end arrived with the last piece, before that piece is read.
   */
  readonly ended: boolean;
}

export interface UpstreamResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  /** The body as it arrives from the socket; consume it or call {@link UpstreamResponse.discard}. */
  readonly body: UpstreamBody;
  /** Reads at most `limit` bytes of the body as text (for error bodies) and releases the connection. */
  readText(limit?: number): Promise<string>;
  /** Drops the body without reading it (frees the socket for reuse when the body is small, else closes it). */
  discard(): Promise<void>;
}

export interface UpstreamClient {
  request(request: UpstreamRequest): Promise<UpstreamResponse>;
  /** Waits for requests in flight, then closes every pooled connection. */
  close(): Promise<void>;
  /** The undici dispatcher (for metrics on pool stats). */
  readonly dispatcher: Dispatcher;
  /** The dispatcher of a channel's outbound proxy (the direct one without), for calls made with undici's fetch. */
  dispatcherFor(proxy: string | undefined): Dispatcher;
}

/** Proxy dispatchers kept at once (one per distinct `setting.proxy`). */
const MAX_PROXIES = 256;

/**
 * A controller that also aborts when `parent` does. Cheaper than `AbortSignal.any` on every request (that one
 * tracks its sources with weak references the garbage collector must process); the listener goes with the
 * parent, which lives as long as the client's request.
 */
export function abortedWith(parent: AbortSignal | undefined): AbortController {
  const controller = new AbortController();
  if (parent?.aborted) controller.abort(parent.reason);
  else parent?.addEventListener('abort', () => controller.abort(parent.reason), { once: true });
  return controller;
}

/**
 * Connections the relay may hold open to one origin (docs/adr/0035). A streamed answer holds its connection for
 * as long as it lasts, so this is how many streams one upstream can serve at once; the rest wait in undici's queue,
 * and a stream that waits there starts late and then delivers its frames in bursts. It is a guard against running
 * out of file descriptors, not a throttle: every stream a client opens needs one.
 */
const CONNECTIONS_PER_ORIGIN = 4096;

export function createUpstreamClient(options: UpstreamClientOptions = {}): UpstreamClient {
  const defaultHeadersTimeoutMs = options.headersTimeoutMs ?? 300_000;
  const defaultBodyTimeoutMs = options.bodyTimeoutMs ?? 300_000;
  const agent = new Agent({
    connections: options.connectionsPerOrigin ?? CONNECTIONS_PER_ORIGIN,
    connectTimeout: options.connectTimeoutMs ?? 10_000,
    // Both timeouts are enforced per request below (undici's may not fire, and cannot be raised per request
    // above the Agent's value), so undici's are off.
    headersTimeout: 0,
    bodyTimeout: 0,
    keepAliveTimeout: options.keepAliveTimeoutMs ?? 30_000,
    keepAliveMaxTimeout: 600_000,
  });

  // One dispatcher per proxy URL, made on first use and closed with the client.
  const proxies = new Map<string, Dispatcher>();
  const dispatcherOf = (proxy: string | undefined): Dispatcher => {
    if (proxy === undefined) return agent;
    let dispatcher = proxies.get(proxy);
    if (dispatcher === undefined) {
      dispatcher = createProxyDispatcher(proxy, {
        connections: options.connectionsPerOrigin ?? CONNECTIONS_PER_ORIGIN,
        connectTimeout: options.connectTimeoutMs ?? 10_000,
        headersTimeout: 0,
        bodyTimeout: 0,
        keepAliveTimeout: options.keepAliveTimeoutMs ?? 30_000,
        keepAliveMaxTimeout: 600_000,
      });
      // Proxies a channel no longer names are let go (after their requests in flight) once there are many.
      if (proxies.size >= MAX_PROXIES) {
        const [oldest, unused] = proxies.entries().next().value as [string, Dispatcher];
        proxies.delete(oldest);
        void unused.close().catch(() => {});
      }
      proxies.set(proxy, dispatcher);
    }
    return dispatcher;
  };

  // Parsing a URL costs more than the rest of sending a request; a channel's few URLs are parsed once.
  const targets = new Map<string, { readonly origin: string; readonly path: string }>();
  const targetOf = (url: string) => {
    let target = targets.get(url);
    if (target === undefined) {
      const parsed = new URL(url);
      target = { origin: parsed.origin, path: `${parsed.pathname}${parsed.search}` };
      if (targets.size >= 1024) targets.clear();
      targets.set(url, target);
    }
    return target;
  };

  return {
    dispatcher: agent,
    dispatcherFor: dispatcherOf,
    async request(request) {
      const target = targetOf(request.url);
      const exchange = new DispatchResponse({
        signal: request.signal,
        body: request.body,
        headersTimeoutMs: request.headersTimeoutMs ?? defaultHeadersTimeoutMs,
        bodyTimeoutMs: request.bodyTimeoutMs ?? defaultBodyTimeoutMs,
      });
      // A caller already gone has its exchange failed at once: nothing is sent.
      if (request.signal?.aborted !== true)
        dispatcherOf(request.proxy).dispatch(
          {
            origin: target.origin,
            path: target.path,
            method: request.method ?? 'POST',
            headers: request.headers,
            body: request.body,
          },
          exchange,
        );
      await exchange.head;
      return responseOf(exchange, exchange.status === 200 ? request.rewrite : undefined);
    },
    close: async () => {
      await Promise.all([agent.close(), ...[...proxies.values()].map((proxy) => proxy.close())]);
    },
  };
}

/** The dispatcher of a proxy URL; one that is not a supported proxy fails every request with a fixed message. */
export function createProxyDispatcher(proxy: string, pool: ProxyPoolOptions): Dispatcher {
  return createProxyAgent(proxy, pool) ?? refusingDispatcher();
}

/** A dispatcher for an unusable proxy setting: every request fails as a connection failure, nothing is sent. */
function refusingDispatcher(): Dispatcher {
  const dispatch = (_options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean => {
    handler.onResponseError?.(
      null as unknown as Dispatcher.DispatchController,
      new UpstreamFailure('connect', INVALID_PROXY_MESSAGE),
    );
    return false;
  };
  return { dispatch, close: async () => {}, destroy: async () => {} } as unknown as Dispatcher;
}

/**
 * The exchange as the relay reads it; a 200 answer with a rewrite (`AnswerRewrite`) is rewritten as it is read:
 * an event stream payload by payload, any other body whole.
 */
function responseOf(exchange: DispatchResponse, rewrite: AnswerRewrite | undefined): UpstreamResponse {
  const { status, headers } = exchange;
  const discard = () => exchange.discard();
  if (rewrite === undefined)
    return { status, headers, body: exchange, readText: (limit) => exchange.readText(limit), discard };
  if (String(headers['content-type'] ?? '').includes('text/event-stream'))
    return {
      status,
      headers,
      body: new RewrittenStream(exchange, rewrite.createStream()),
      readText: (limit) => exchange.readText(limit),
      discard,
    };
  return {
    status,
    headers,
    body: exchange,
    readText: async (limit) => rewrite.json(await exchange.readText(limit)),
    discard,
  };
}

/**
 * An event stream whose `data:` payloads are rewritten line by line as they arrive (the rest of each line, other
 * lines and `[DONE]` pass as they are). A line cut between two pieces waits for its end; the stream's tail is
 * handed over when the upstream ends it.
 */
class RewrittenStream implements UpstreamBody {
  private readonly inner: UpstreamBody;
  private readonly rewrite: (data: string) => string;
  constructor(inner: UpstreamBody, rewrite: (data: string) => string) {
    this.inner = inner;
    this.rewrite = rewrite;
  }
  get ended(): boolean {
    return this.inner.ended;
  }
  async *[Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
    const decoder = new StringDecoder('utf8');
    let carry = '';
    for await (const piece of this.inner) {
      carry += decoder.write(piece as Buffer);
      const lastBreak = carry.lastIndexOf('\n');
      if (lastBreak < 0) continue;
      const complete = carry.slice(0, lastBreak + 1);
      carry = carry.slice(lastBreak + 1);
      yield Buffer.from(this.rewriteLines(complete));
    }
    carry += decoder.end();
    if (carry !== '') yield Buffer.from(this.rewriteLines(carry));
  }
  private rewriteLines(text: string): string {
    return text.replace(/^data:[ \t]*(.*?)(\r?)$/gm, (line, data: string, cr: string) =>
      data === '' || data === '[DONE]' ? line : `data: ${this.rewrite(data)}${cr}`,
    );
  }
}

/** Header names never forwarded from an upstream response to the client (hop-by-hop, or recomputed by us). */
export const HOP_BY_HOP_HEADERS: ReadonlySet<string> = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'content-length',
  'content-encoding',
]);
