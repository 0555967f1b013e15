/**
 * The request and reply as the pipeline uses them: the few members it reads and calls. Fastify's request and reply
 * have them (the routes Fastify serves), and so do the front door's (front-door.ts: the JSON POST routes a relay
 * process serves without Fastify's per-request machinery). Nothing in the pipeline needs more.
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyBaseLogger } from 'fastify';

export interface RelayRequest {
  readonly id: string;
  /** The client's address (the forwarded one when TRUST_PROXY is set). */
  readonly ip: string;
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  /** The parsed JSON body; a multipart upload is handed over unread (the stream itself). */
  body: unknown;
  /** Path parameters (`/v1/engines/:model/embeddings`). */
  readonly params?: unknown;
  readonly raw: IncomingMessage;
  /** A logger bound to the request id. */
  readonly log: FastifyBaseLogger;
  /** The route pattern, the metrics' route label. */
  readonly routeOptions: { readonly url?: string | undefined };
}

export interface RelayReply {
  readonly raw: ServerResponse;
  /** Whether the answer is out of the reply's hands: ended, or taken over (`hijack`) to be written raw. */
  readonly sent: boolean;
  code(status: number): RelayReply;
  header(name: string, value: string | string[]): RelayReply;
  removeHeader(name: string): RelayReply;
  getHeaders(): Record<string, unknown>;
  /** An object is sent as JSON, a string or buffer as is, a readable stream piped. */
  send(payload?: unknown): RelayReply;
  /** The caller writes the answer to `raw` itself. */
  hijack(): RelayReply;
}
