/**
 * Anthropic errors (https://docs.anthropic.com/en/api/errors): `{ "type": "error", "error": { "type", "message" } }`
 * with 400 invalid_request_error, 401 authentication_error, 403 permission_error, 404 not_found_error,
 * 413 request_too_large, 429 rate_limit_error, 500 api_error, 529 overloaded_error. 529 is a 5xx and so retried;
 * an `overloaded_error` is also a channel that is busy, not broken.
 */
import type { RelayError } from '../../contract.ts';
import { parseUpstreamError } from '../../errors.ts';

const TYPE_BY_STATUS: Readonly<Record<number, string>> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  504: 'timeout_error',
  529: 'overloaded_error',
};

/** The Anthropic error type of an HTTP status (what the relay answers Anthropic clients with). */
export const anthropicErrorType = (status: number): string =>
  TYPE_BY_STATUS[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');

/** An error answer of an Anthropic upstream; the error's `type` doubles as the code (`overloaded_error`, ...). */
export function readAnthropicError(status: number, body: string): RelayError {
  const parsed = parseUpstreamError(status, body);
  return parsed.code === null && parsed.type !== 'upstream_error' ? { ...parsed, code: parsed.type } : parsed;
}

/** An `error` event of a stream (`{ type: "error", error: { type, message } }`) as a RelayError. */
export function anthropicStreamError(payload: Record<string, unknown>): RelayError {
  const parsed = readAnthropicError(200, JSON.stringify(payload));
  const status = parsed.type === 'overloaded_error' ? 529 : 502;
  return { ...parsed, status };
}
