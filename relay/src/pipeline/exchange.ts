/**
 * The call as the pipeline's steps share it: the request and reply (the few members the pipeline reads and calls)
 * and the exchange built on them.
 *
 * The request and reply as the pipeline uses them: the few members it reads and calls. Fastify's request and reply
 * have them (the routes Fastify serves), and so do the front door's (front-door.ts: the JSON POST routes a relay
 * process serves without Fastify's per-request machinery). Nothing in the pipeline needs more.
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyBaseLogger } from 'fastify';
import type { Billing } from '../books/settle.ts';
import type { Ingress } from '../formats/ingress.ts';
import type { StepMarks } from '../metrics/tracing.ts';
import type { Caller } from './authenticate.ts';
import type { ContentCapture } from './content-capture.ts';
import type { EndpointSpec, PreparedRequest } from './endpoints/spec.ts';

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

/**
 * One relayed call as every step after authentication sees it (docs/adr/0035): made once at the edge
 * (`handleRelay`, the playground) and passed to each step instead of an argument list. It grows as the steps learn
 * more: `prepare` adds the client's request ({@link PreparedExchange}), the hold adds the bill and the client-gone
 * signal ({@link HeldExchange}); the object stays the same one, so a step never copies the call.
 */
export interface Exchange {
  readonly request: RelayRequest;
  readonly reply: RelayReply;
  readonly spec: EndpointSpec;
  /** The client's format: how its request reads and how its answers, streams and errors are written. */
  readonly ingress: Ingress;
  readonly caller: Caller;
  /** `performance.now()` when the call arrived: the clock of the first-token time and the log's duration. */
  readonly startedAt: number;
  /** Step marks for the call's trace; undefined while tracing is off. */
  readonly steps: StepMarks | undefined;
  /** The console playground: billed to the user only (no token balance). */
  readonly isPlayground: boolean;
}

/** The call once its request is read. */
export interface PreparedExchange extends Exchange {
  readonly prepared: PreparedRequest;
}

/** The call once its most possible cost is held: what the attempts, the answer and the settlement use. */
export interface HeldExchange extends PreparedExchange {
  readonly billing: Billing;
  /** Aborted when the client goes away before the answer is complete; it cancels the upstream request. */
  readonly clientGone: AbortController;
  /** The content log's capture, only when the caller's group or token keeps content logs (docs/adr/0045). */
  readonly capture?: ContentCapture | undefined;
}

/** Adds what a step learnt to the call, keeping it the same object. */
export const growExchange = <E extends Exchange, A extends object>(exchange: E, added: A): E & A =>
  Object.assign(exchange, added);
