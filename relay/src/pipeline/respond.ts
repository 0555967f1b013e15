/**
 * Error answers of the relay in the caller's own protocol (OpenAI's on `/v1/*`, Anthropic's on `/v1/messages`,
 * Gemini's on `/v1beta`): the client's format (its ingress) is decided once per call at the door
 * (../http/protocol.ts) and handed down; a final upstream 429 gets the neutral "saturated" text (§4.2).
 */

import { isRecord, type Json } from '@turnpike/core/json';
import type { Ingress, RelayError, RelayReply, RelayRequest } from '../contract.ts';

export { isRecord, type Json };

import { SATURATED_MESSAGE } from '../errors.ts';

/** Answers `error` in the shape the client of `ingress` reads. */
export function sendError(
  request: RelayRequest,
  reply: RelayReply,
  error: RelayError,
  ingress: Ingress,
): RelayReply {
  const shown = error.status === 429 && !error.isLocal ? { ...error, message: SATURATED_MESSAGE } : error;
  if (error.retryAfterSeconds !== undefined) reply.header('retry-after', String(error.retryAfterSeconds));
  return reply
    .code(error.status)
    .header('content-type', 'application/json')
    .send(ingress.errorBody(shown, request.id));
}
