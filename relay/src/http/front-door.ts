/**
 * The front door: the relay's JSON POST routes (`/v1/chat/completions` and the other fixed paths) served straight
 * from Node's HTTP server, in front of Fastify. Fastify's per-request machinery (router, request and reply objects,
 * hooks, content-type parsing, a child logger) costs about a quarter of what a bare proxy spends on a call
 * (`make bench`); the relay's hottest routes need none of it. Everything else (multipart uploads, GETs, path
 * parameters, other content types, the console API in ROLE=all) goes on to Fastify unchanged. Both entrances call
 * the same pipeline with the same request and reply members (pipeline/exchange.ts). See docs/adr/0014.
 *
 * What the Fastify routes do, the door does the same way: the request id and its `x-request-id` header, the client
 * address (TRUST_PROXY), cross-origin headers (cors.ts), compressed bodies (request-encoding.ts), the body limit,
 * JSON errors and prototype-poisoning refusals as 400s in OpenAI's error shape, route metrics, and a 500 in that
 * shape for a bug.
 */

import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { pipeline, type Readable } from 'node:stream';
import proxyAddr from '@fastify/proxy-addr';
import { answerClientError, refuseBadUrl } from '@turnpike/core/http/edge-errors';
import { requestIdOf } from '@turnpike/core/http/request-id';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import secureJson from 'secure-json-parse';
import type { RelayError, RelayReply, RelayRequest } from '../contract.ts';
import {
  DATABASE_RETRY_AFTER_SECONDS,
  gatewayFailure,
  gatewayFailureOf,
  toOpenAiErrorBody,
} from '../errors.ts';
import { countRequest, type RelayMetrics } from '../metrics/relay-metrics.ts';
import { corsHeaders } from './cors.ts';
import { decodeBody, UNREADABLE_ENCODING, unsupportedEncoding } from './request-encoding.ts';

export type DoorHandler = (request: RelayRequest, reply: RelayReply) => Promise<unknown>;

export interface FrontDoorOptions {
  /** Route pattern (a fixed path, query strings aside) → handler, for POSTs with a JSON body. */
  readonly routes: ReadonlyMap<string, DoorHandler>;
  readonly metrics: RelayMetrics;
  readonly log: FastifyBaseLogger;
  readonly trustProxy: boolean;
  readonly bodyLimit: number;
  /** The error body of a route in its clients' shape (default OpenAI's). */
  readonly errorBody?: (path: string, error: RelayError, requestId: string) => unknown;
}

export interface FrontDoor {
  /** Serves the request and answers true, or answers false and leaves it untouched for Fastify. */
  take(req: IncomingMessage, res: ServerResponse): boolean;
  /** From now on every request goes to Fastify (which answers 503 while the app closes). */
  close(): void;
}

const trustAll = () => true;

/** A JSON media type, as Fastify's own parser takes it (`application/json`, with or without parameters). */
function isJson(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  if (contentType === 'application/json') return true;
  const type = contentType.split(';', 1)[0]?.trim().toLowerCase();
  return type === 'application/json';
}

class DoorRequest implements RelayRequest {
  body: unknown = undefined;
  readonly params = undefined;
  readonly raw: IncomingMessage;
  readonly id: string;
  readonly ip: string;
  readonly routeOptions: { readonly url: string };
  private readonly root: FastifyBaseLogger;
  private child: FastifyBaseLogger | undefined;

  constructor(raw: IncomingMessage, id: string, ip: string, route: string, root: FastifyBaseLogger) {
    this.raw = raw;
    this.id = id;
    this.ip = ip;
    this.routeOptions = { url: route };
    this.root = root;
  }

  get method(): string {
    return this.raw.method ?? 'POST';
  }
  get url(): string {
    return this.raw.url ?? '/';
  }
  get headers(): IncomingHttpHeaders {
    return this.raw.headers;
  }
  /** Made on first use: most requests never log. */
  get log(): FastifyBaseLogger {
    this.child ??= this.root.child({ reqId: this.id });
    return this.child;
  }
}

const isReadable = (value: unknown): value is Readable =>
  typeof value === 'object' && value !== null && typeof (value as Readable).pipe === 'function';

class DoorReply implements RelayReply {
  readonly raw: ServerResponse;
  private status = 200;
  private readonly headers: Record<string, string | string[]>;
  private taken = false;
  private readonly log: () => FastifyBaseLogger;

  constructor(raw: ServerResponse, id: string, log: () => FastifyBaseLogger) {
    this.raw = raw;
    this.headers = { 'x-request-id': id };
    this.log = log;
  }

  get sent(): boolean {
    return this.taken || this.raw.writableEnded;
  }
  code(status: number): RelayReply {
    this.status = status;
    return this;
  }
  header(name: string, value: string | string[]): RelayReply {
    this.headers[name.toLowerCase()] = value;
    return this;
  }
  removeHeader(name: string): RelayReply {
    delete this.headers[name.toLowerCase()];
    return this;
  }
  getHeaders(): Record<string, unknown> {
    return this.headers;
  }
  hijack(): RelayReply {
    this.taken = true;
    return this;
  }
  send(payload?: unknown): RelayReply {
    if (this.sent) return this;
    this.taken = true;
    const { raw, headers } = this;
    if (raw.destroyed) return this;
    if (isReadable(payload)) {
      raw.writeHead(this.status, headers);
      pipeline(payload, raw, (err) => {
        if (err && !raw.destroyed) this.log().warn({ err }, 'a piped answer broke');
      });
      return this;
    }
    let body: string | Buffer;
    if (typeof payload === 'string' || Buffer.isBuffer(payload)) {
      body = payload;
      headers['content-type'] ??=
        typeof payload === 'string' ? 'text/plain; charset=utf-8' : 'application/octet-stream';
    } else if (payload === undefined) {
      body = '';
    } else {
      body = JSON.stringify(payload);
      headers['content-type'] ??= 'application/json; charset=utf-8';
    }
    headers['content-length'] = String(Buffer.byteLength(body));
    raw.writeHead(this.status, headers);
    raw.end(body);
    return this;
  }
}

/** The body as JSON; prototype-poisoning keys are refused as Fastify refuses them. */
function parseBody(text: string): { ok: true; value: unknown } | { ok: false; message: string } {
  try {
    const value: unknown =
      text.includes('__proto__') || text.includes('constructor')
        ? secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' })
        : JSON.parse(text);
    return { ok: true, value };
  } catch (error) {
    return { ok: false, message: error instanceof Error ? error.message : 'the body is not valid JSON' };
  }
}

export function createFrontDoor(options: FrontDoorOptions): FrontDoor {
  const { routes, metrics, log, bodyLimit } = options;
  const errorBody =
    options.errorBody ?? ((_path: string, error: RelayError, id: string) => toOpenAiErrorBody(error, id));
  const trust = options.trustProxy ? trustAll : undefined;
  let open = true;

  const serve = (req: IncomingMessage, res: ServerResponse, route: string, handler: DoorHandler) => {
    /** A failure before the pipeline ran (the body) or a bug in it, answered in the route's error shape. */
    const answerFailure = (reply: DoorReply, id: string, error: RelayError) => {
      reply.code(error.status).send(errorBody(route, error, id));
    };
    const id = requestIdOf(req.headers);
    const ip = trust ? proxyAddr(req, trust) : (req.socket.remoteAddress ?? '');
    const request = new DoorRequest(req, id, ip, route, log);
    const reply = new DoorReply(res, id, () => request.log);
    const cors = corsHeaders(req.headers);
    if (cors) for (const [name, value] of Object.entries(cors)) reply.header(name, value);
    countRequest(metrics, route, res);

    const declared = Number(req.headers['content-length']);
    if (declared > bodyLimit) {
      res.shouldKeepAlive = false;
      answerFailure(reply, id, gatewayFailure(413, 'Request body is too large'));
      req.resume();
      return;
    }
    const decoded = decodeBody(req.headers['content-encoding'], req);
    if (decoded.kind === 'unsupported') {
      answerFailure(reply, id, gatewayFailure(415, unsupportedEncoding(decoded.encoding)));
      req.resume();
      return;
    }
    const source = decoded.kind === 'decoded' ? decoded.body : req;
    const chunks: Buffer[] = [];
    let size = 0;
    let refused = false;
    const refuse = (status: number, message: string) => {
      refused = true;
      chunks.length = 0;
      res.shouldKeepAlive = false;
      answerFailure(reply, id, gatewayFailure(status, message));
      // A compressed body is not inflated further (a small one can expand without end); the rest is drained.
      if (source !== req) {
        source.destroy();
        req.resume();
      }
    };
    source.on('data', (chunk: Buffer) => {
      if (refused) return;
      size += chunk.length;
      if (size > bodyLimit) refuse(413, 'Request body is too large');
      else chunks.push(chunk);
    });
    if (source !== req)
      source.on('error', () => {
        if (!refused) refuse(400, UNREADABLE_ENCODING);
      });
    source.on('end', () => {
      if (refused) return;
      if (size === 0) {
        answerFailure(
          reply,
          id,
          gatewayFailure(400, "Body cannot be empty when content-type is set to 'application/json'"),
        );
        return;
      }
      const text = (chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size)).toString(
        'utf8',
      );
      const parsed = parseBody(text);
      if (!parsed.ok) {
        answerFailure(reply, id, gatewayFailure(400, parsed.message));
        return;
      }
      request.body = parsed.value;
      handler(request, reply).catch((err: unknown) => {
        request.log.error({ err }, 'relay request failed');
        if (reply.sent) {
          if (!res.writableEnded) res.destroy();
          return;
        }
        const failure = gatewayFailureOf(err);
        if (failure.status === 503) reply.header('retry-after', String(DATABASE_RETRY_AFTER_SECONDS));
        answerFailure(reply, id, failure.status === 503 ? failure : gatewayFailure(500, ''));
      });
    });
    // A client that leaves while sending its body: nothing was read, nothing is answered.
    req.on('error', () => undefined);
  };

  return {
    take(req, res) {
      if (!open || req.method !== 'POST') return false;
      const url = req.url ?? '';
      const query = url.indexOf('?');
      const path = query === -1 ? url : url.slice(0, query);
      const handler = routes.get(path);
      if (handler === undefined || !isJson(req.headers['content-type'])) return false;
      try {
        serve(req, res, path, handler);
      } catch (err) {
        // A bug in the door itself: answered, not left to end the process as an uncaught exception.
        log.error({ err }, 'relay request failed');
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify(toOpenAiErrorBody(gatewayFailure(500, ''))));
      }
      return true;
    },
    close() {
      open = false;
    },
  };
}

type Listener = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * Puts the door in front of `app`'s own request listener on its HTTP server; requests the door does not take go
 * on to Fastify, unless their path is one the router would refuse in its own shape (core/src/http/edge-errors.ts:
 * an over-long path parameter, undecodable percent-encoding), which is answered in the caller's protocol, as are
 * Node's parser refusals (oversized headers, an over-long request line). Fastify's `inject` calls its router
 * directly and so never meets the door; tests that should go through it emit the server's `request` event instead
 * (testing/relay-test-app.ts).
 */
export function installFrontDoor(app: FastifyInstance, door: FrontDoor): void {
  const server = app.server;
  const listeners = server.listeners('request') as Listener[];
  const routing = listeners[0];
  if (listeners.length !== 1 || routing === undefined)
    throw new Error(`the front door expects Fastify's one request listener, found ${listeners.length}`);
  server.removeListener('request', routing);
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (!door.take(req, res) && !refuseBadUrl(req, res)) routing(req, res);
  });
  // Refusals the router or Node's parser would answer in their own shapes, in the caller's protocol instead.
  server.removeAllListeners('clientError');
  server.on('clientError', answerClientError);
  app.addHook('preClose', (done) => {
    door.close();
    done();
  });
}
