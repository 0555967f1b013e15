/**
 * The client side of the provider seam (the upstream side is adapters/registry.ts). An ingress knows one client
 * format: where the caller's key is, how its request reads as the canonical chat request when the upstream speaks
 * another format, and how answers, streams and errors are written back in the client's shapes.
 */

import type { ClientProtocol } from '@turnpike/core/http/edge-errors';
import type { RelayError } from '../errors.ts';
import type { NormalisedUsage } from '../metering/usage.ts';
import type { RelayRequest } from '../pipeline/exchange.ts';
import { anthropicMessagesIngress } from './anthropic/ingress.ts';
import type { ChatChunk, ChatRequest, Json } from './canonical.ts';
import type { WireFormat } from './format.ts';
import { geminiIngress } from './gemini/ingress.ts';
import { openAiChatIngress } from './openai/chat-ingress.ts';

/** Writes a canonical stream in a client's format. One per streamed answer (it keeps the answer's state). */
export interface StreamEncoder {
  /** Whether the relay's `: x-turnpike-quota: <n>` comment goes into the stream (OpenAI clients). */
  readonly quotaComment: boolean;
  /** One canonical chunk; `raw` is its JSON text when it came unchanged from an OpenAI upstream. */
  chunk(chunk: ChatChunk, raw?: string): string;
  /** The output is complete: closing events, with the usage when the client's format carries it. */
  end(usage: NormalisedUsage, usageShown: boolean): string;
  /** The whole answer the closing events carried (a Responses `response` object), once `end` has run. */
  answer?(): Json | undefined;
  /** The answer ends early with this error (the client's error event). */
  error(error: RelayError): string;
  /** The very last frame of a stream that ended normally (`data: [DONE]`), or ''. */
  readonly done: string;
  /** The stream's content type when it is not `text/event-stream` (Gemini's JSON-array streams). */
  readonly contentType?: string | undefined;
  /**
   * How an event of an upstream of the client's own format is passed on (its data, credentials removed);
   * default: as the server-sent event it came as.
   */
  passEvent?(data: string): string;
}

export interface Ingress {
  readonly format: WireFormat;
  /** The caller's API key (no `Bearer ` prefix), or undefined. */
  keyOf(request: RelayRequest): string | undefined;
  /** An error as the body the client's SDK reads. */
  errorBody(error: RelayError, requestId: string): unknown;
  /** The client's request as the canonical chat request (for an upstream of another format). */
  toChat(body: Readonly<Json>, model: string, isStream: boolean): ChatRequest;
  /**
   * Why this request cannot go to an upstream of another format (a built-in tool only the client's own provider
   * runs, state the gateway does not keep), as a 400 naming what; undefined when it converts. Such a channel is
   * skipped; when no channel of the client's format serves the model, the caller gets this refusal.
   */
  refuseConversion?(body: Readonly<Json>): RelayError | undefined;
  /**
   * A canonical chat answer in the client's format; `usage` is the bill's, `body` the client's request (which
   * tool a call answers: Responses' custom tools).
   */
  fromChat(answer: Json, usage: NormalisedUsage, model: string, body?: Readonly<Json>): Json;
  /** A stream encoder for one answer (`url`: the client's request URL, for options in its query). */
  streamEncoder(body: Readonly<Json>, model: string, requestId: string, url: string): StreamEncoder;
}

/** `Bearer <key>` → key. */
export function bearerKey(header: unknown): string | undefined {
  if (typeof header !== 'string') return undefined;
  const value = header.trim().replace(/^bearer\s+/i, '');
  return value === '' ? undefined : value;
}

/** A message with the request id, so a user can quote it to an operator. */
export const withRequestId = (message: string, requestId: string): string =>
  requestId ? `${message} (request id: ${requestId})` : message;

/**
 * The ingress whose shapes a client of `protocol` reads its errors in (core's `clientProtocolOf` says which
 * protocol a path belongs to); the relay's own errors outside the three model protocols are OpenAI's.
 */
export function ingressOfProtocol(protocol: ClientProtocol): Ingress {
  if (protocol === 'anthropic') return anthropicMessagesIngress;
  if (protocol === 'gemini') return geminiIngress;
  return openAiChatIngress;
}
