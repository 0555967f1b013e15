/** Error answers of the relay in OpenAI's shape (final upstream 429s get the neutral "saturated" text, §4.2). */
import { localError, type RelayError, SATURATED_MESSAGE, toOpenAiErrorBody } from '../errors.ts';
import type { RelayReply, RelayRequest } from './exchange.ts';

export function sendError(request: RelayRequest, reply: RelayReply, error: RelayError): RelayReply {
  const shown = error.status === 429 && !error.isLocal ? { ...error, message: SATURATED_MESSAGE } : error;
  return reply
    .code(error.status)
    .header('content-type', 'application/json')
    .send(toOpenAiErrorBody(shown, request.id));
}

/** A 400 for a request the gateway cannot relay as sent (a local error: never retried, nothing charged). */
export const invalidRequest = (message: string): RelayError =>
  localError(400, 'invalid_request', message, 'invalid_request_error');

/** A fault of the upstream's answer (status 502), e.g. a body that is not JSON. */
export const upstreamFault = (message: string, code: string): RelayError => ({
  status: 502,
  message,
  type: 'upstream_error',
  code,
  param: null,
  isLocal: false,
});

export type Json = Record<string, unknown>;

export const isRecord = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
