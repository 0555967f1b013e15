/**
 * Bedrock's errors (https://docs.aws.amazon.com/bedrock/latest/APIReference/CommonErrors.html): the type in the
 * `x-amzn-ErrorType` header (`ThrottlingException:http://…`), the text in the body's `message` (`Message`).
 * Classified for the relay: throttling and a model not ready are a busy channel (429, retried, cooled down);
 * an unavailable service 503; a denied model access or a bad signature or key the channel's credential
 * (`permission_error` / `authentication_error`: disables it when automatic disabling is on); a validation error
 * the caller's (400, never retried).
 */

import type { IncomingHttpHeaders } from 'node:http';
import type { RelayError } from '../../contract.ts';

const CLASSES: Readonly<Record<string, { status: number; type: string }>> = {
  ThrottlingException: { status: 429, type: 'rate_limit_error' },
  ModelNotReadyException: { status: 429, type: 'rate_limit_error' },
  ServiceQuotaExceededException: { status: 429, type: 'rate_limit_error' },
  ServiceUnavailableException: { status: 503, type: 'overloaded_error' },
  InternalServerException: { status: 500, type: 'api_error' },
  ModelTimeoutException: { status: 504, type: 'timeout_error' },
  ModelErrorException: { status: 502, type: 'api_error' },
  AccessDeniedException: { status: 403, type: 'permission_error' },
  UnrecognizedClientException: { status: 401, type: 'authentication_error' },
  InvalidSignatureException: { status: 401, type: 'authentication_error' },
  ExpiredTokenException: { status: 401, type: 'authentication_error' },
  ValidationException: { status: 400, type: 'invalid_request_error' },
  ResourceNotFoundException: { status: 404, type: 'not_found_error' },
};

export function readBedrockError(status: number, body: string, headers: IncomingHttpHeaders): RelayError {
  const header = headers['x-amzn-errortype'];
  const errorType = (Array.isArray(header) ? header[0] : header)?.split(':')[0];
  let message = '';
  try {
    const parsed = JSON.parse(body) as { message?: unknown; Message?: unknown };
    const text = parsed.message ?? parsed.Message;
    if (typeof text === 'string') message = text;
  } catch {
    message = '';
  }
  message = (message || `upstream answered ${status}`).slice(0, 1000);
  const known = errorType ? CLASSES[errorType] : undefined;
  return {
    status: known?.status ?? status,
    message: errorType ? `${errorType}: ${message}` : message,
    type: known?.type ?? (status >= 500 ? 'api_error' : 'upstream_error'),
    code: errorType ?? null,
    param: null,
    isLocal: false,
  };
}
