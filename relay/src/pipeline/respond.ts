/**
 * Error answers of the relay in the caller's own protocol (OpenAI's on `/v1/*`, Anthropic's on `/v1/messages`,
 * Gemini's on `/v1beta`): the route binds its ingress to the request before the pipeline runs; a final upstream
 * 429 gets the neutral "saturated" text (§4.2).
 */

import { isRecord, type Json } from '@turnpike/core/json';
import type { Ingress, RelayError, RelayReply, RelayRequest } from '../contract.ts';

export { isRecord, type Json };

import { SATURATED_MESSAGE } from '../errors.ts';
import { openAiChatIngress } from '../formats/openai/chat-ingress.ts';

/** The ingress of each request whose client is not an OpenAI one (keyed by the Node request both entrances share). */
const bound = new WeakMap<object, Ingress>();

/** Makes the request's errors (and the pipeline's answers) use `ingress`. */
export function bindIngress(request: RelayRequest, ingress: Ingress): void {
  bound.set(request.raw, ingress);
}

/** The client format of a request: the one bound to it, else OpenAI's. */
export const ingressOf = (request: RelayRequest): Ingress => bound.get(request.raw) ?? openAiChatIngress;

export function sendError(request: RelayRequest, reply: RelayReply, error: RelayError): RelayReply {
  const shown = error.status === 429 && !error.isLocal ? { ...error, message: SATURATED_MESSAGE } : error;
  if (error.retryAfterSeconds !== undefined) reply.header('retry-after', String(error.retryAfterSeconds));
  return reply
    .code(error.status)
    .header('content-type', 'application/json')
    .send(ingressOf(request).errorBody(shown, request.id));
}
