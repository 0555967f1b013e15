/**
 * The client's protocol, decided once per call at the door: which ingress (the client side of a format, in
 * formats/) a call reads its answers and errors in. The routes, the front door and the error handlers ask here;
 * the pipeline is handed the answer (the exchange's `ingress`) and never guesses it again.
 */
import { type ClientProtocol, clientProtocolOf } from '@turnpike/core/http/edge-errors';
import type { EndpointSpec, Ingress, RelayRequest } from '../contract.ts';
import { anthropicMessagesIngress } from '../formats/anthropic/ingress.ts';
import { geminiIngress } from '../formats/gemini/ingress.ts';
import { openAiChatIngress } from '../formats/openai/chat-ingress.ts';

/**
 * The ingress whose shapes a client of `protocol` reads its errors in (core's `clientProtocolOf` says which
 * protocol a path belongs to); the relay's own errors outside the three model protocols are OpenAI's.
 */
export function ingressOfProtocol(protocol: ClientProtocol): Ingress {
  if (protocol === 'anthropic') return anthropicMessagesIngress;
  if (protocol === 'gemini') return geminiIngress;
  return openAiChatIngress;
}

/** The ingress of a path's client (the front door's refusals, Fastify's failures before a route ran). */
export const ingressOfPath = (path: string | undefined, method: string | undefined): Ingress =>
  ingressOfProtocol(clientProtocolOf(path, method));

/** The ingress of an endpoint's clients: the format the endpoint belongs to, OpenAI's by default. */
export const ingressOfSpec = (spec: EndpointSpec): Ingress => spec.ingress ?? openAiChatIngress;

/** `GET /v1/models`: Anthropic's SDK lists models on the same path, and tells itself by `anthropic-version`. */
export const modelsIngressOf = (request: RelayRequest): Ingress =>
  request.headers['anthropic-version'] !== undefined ? anthropicMessagesIngress : openAiChatIngress;

/**
 * Puts the caller's key, wherever the client's format keeps it (`x-api-key`, `x-goog-api-key`, `?key=`), where the
 * token check reads it; an OpenAI client's is already there.
 */
export function enterThrough(ingress: Ingress, request: RelayRequest): void {
  if (ingress.format === 'openai') return;
  const key = ingress.keyOf(request);
  if (key !== undefined) request.headers.authorization = `Bearer ${key}`;
  else delete request.headers.authorization;
}
