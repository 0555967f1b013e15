/**
 * Upstream error classification (reference §4.2 retries, §4.7 automatic channel disable) and the OpenAI error
 * body the relay answers `/v1/*` callers with.
 *
 * Pure functions: the pipeline asks "may I try another channel?" and "should this channel be switched off?"
 * after each failed attempt, with the channel's settings and the current options as arguments.
 */

import { isDatabaseUnreachable } from '@turnpike/core/db/unreachable';
import { isRecord } from '@turnpike/core/json';
import type { RelayError } from './contract.ts';
import type { WordMatcher } from './metering/sensitive.ts';

/** OpenAI's error body: `{ "error": { message, type, param, code } }`. */
export interface OpenAiErrorBody {
  readonly error: {
    readonly message: string;
    readonly type: string;
    readonly param: string | null;
    readonly code: string | number | null;
  };
}

/** Why an attempt failed without an HTTP error from the upstream: these are retryable when the option allows. */
export type AttemptFailure = 'empty-response' | 'first-token-timeout' | 'connect-error';

/** An error the gateway raises itself (never retried, never disables a channel). */
export function localError(
  status: number,
  code: string,
  message: string,
  type = 'new_api_error',
): RelayError {
  return { status, message, type, code, param: null, isLocal: true };
}

/** The OpenAI-shape body for a client; the request id is appended so users can quote it to an operator. */
/**
 * A failure of the gateway's own (a request it cannot read: bad JSON, too large; or a bug): a 4xx is the caller's
 * and says why, anything else is a 500 that says nothing of the inside.
 */
export function gatewayFailure(status: number, message: string): RelayError {
  return status >= 400 && status < 500
    ? localError(status, 'invalid_request', message, 'invalid_request_error')
    : localError(500, 'internal_error', 'internal error of the gateway', 'new_api_error');
}

/** Seconds a caller is asked to wait (`Retry-After`) while the database is unreachable. */
export const DATABASE_RETRY_AFTER_SECONDS = 5;

/**
 * `gatewayFailure` for an error that reached a handler of the relay's own: the database being unreachable (a
 * cache miss during an outage, a route that reads the database) is a 503 to try again shortly, not a 500.
 */
export function gatewayFailureOf(error: unknown): RelayError {
  if (isDatabaseUnreachable(error))
    return localError(503, 'database_unavailable', 'the database is unreachable; try again shortly');
  const { statusCode, message } = (error ?? {}) as { statusCode?: number; message?: string };
  return gatewayFailure(statusCode ?? 500, message ?? '');
}

export function toOpenAiErrorBody(error: RelayError, requestId?: string): OpenAiErrorBody {
  const message = requestId ? `${error.message} (request id: ${requestId})` : error.message;
  return { error: { message, type: error.type, param: error.param, code: error.code } };
}

const asText = (value: unknown): string | undefined =>
  typeof value === 'string' && value !== '' ? value : undefined;

const asCode = (value: unknown): string | number | null =>
  typeof value === 'string' || typeof value === 'number' ? value : null;

/**
 * Reads an upstream error response in any of the shapes providers use: OpenAI `{error:{message,type,code}}`,
 * Anthropic `{type:"error",error:{type,message}}`, `{error:"text"}`, `{message, code}`, `{detail}`, or plain text.
 * Anything unreadable becomes `upstream_error` / `bad_response_status_code` with the status in the message.
 * The body is never echoed whole (it may be large or contain upstream internals): only its message field,
 * cut to 1000 characters.
 */
export function parseUpstreamError(status: number, body: string): RelayError {
  let message: string | undefined;
  let type: string | undefined;
  let code: string | number | null = null;
  let param: string | null = null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    parsed = undefined;
  }
  if (isRecord(parsed)) {
    const inner = parsed.error;
    if (isRecord(inner)) {
      message = asText(inner.message);
      type = asText(inner.type);
      code = asCode(inner.code);
      param = asText(inner.param) ?? null;
    } else if (typeof inner === 'string') {
      message = asText(inner);
      type = asText(parsed.type);
    } else {
      message = asText(parsed.message) ?? asText(parsed.detail) ?? asText(parsed.msg);
      type = asText(parsed.type);
      code = asCode(parsed.code);
    }
    if (type === 'error') type = undefined;
  } else if (body.trim() !== '' && !body.trimStart().startsWith('<')) {
    // Plain text (but not an HTML error page from a proxy in front of the upstream).
    message = body.trim();
  }
  return {
    status,
    message: (message ?? `bad response status code ${status}`).slice(0, 1000),
    type: type ?? 'upstream_error',
    code: code ?? (message === undefined ? 'bad_response_status_code' : null),
    param,
    isLocal: false,
  };
}

/**
 * Applies a channel's `status_code_mapping` (`{"429":"500"}`) to the status the client sees. 200 is never
 * rewritten, and an unparseable target is ignored.
 */
export function mapStatusCode(
  status: number,
  mapping: Readonly<Record<string, string | number>> | undefined,
): number {
  if (!mapping || status === 200) return status;
  const target = mapping[String(status)];
  if (target === undefined) return status;
  const mapped = Number(target);
  return Number.isInteger(mapped) && mapped >= 100 && mapped <= 599 ? mapped : status;
}

export interface RetryContext {
  /** Attempts still allowed after this one (`RetryTimes` minus retries done). */
  readonly remaining: number;
  /** The token forced a channel (`sk-…-<id>`): no other channel may be tried. */
  readonly isForcedChannel: boolean;
  /** Anthropic channels answer 400 for transient overload; the reference retries them. */
  readonly isAnthropicChannel?: boolean;
  /** Retry an empty 200 and a first-token timeout on another channel (off by default, as in the reference). */
  readonly retryEmptyAndSlow?: boolean;
}

/**
 * Whether a failed attempt may be retried on another channel (reference `shouldRetry`): never for local errors,
 * forced channels or when no attempt is left; yes for 429, 307 and 5xx except 504/524 (the upstream may still be
 * working: a retry could bill twice); 400 only for Anthropic; never for 408 or 2xx; yes for anything else
 * (401, 403, 404: another channel may have a valid key). Connection errors are retried; an empty 200 and a
 * first-token timeout only when `retryEmptyAndSlow` is set.
 */
export function shouldRetry(failure: RelayError | AttemptFailure, context: RetryContext): boolean {
  if (context.remaining <= 0 || context.isForcedChannel) return false;
  if (typeof failure === 'string') {
    if (failure === 'connect-error') return true;
    return context.retryEmptyAndSlow === true;
  }
  if (failure.isLocal) return false;
  const { status } = failure;
  if (status === 429 || status === 307) return true;
  if (status >= 500) return status !== 504 && status !== 524;
  if (status === 400) return context.isAnthropicChannel === true;
  if (status === 408) return false;
  if (status >= 200 && status < 300) return false;
  return true;
}

/** Error codes and types that mean the channel's key is unusable (reference §4.7). */
export const DISABLING_ERROR_CODES: ReadonlySet<string> = new Set([
  'invalid_api_key',
  'account_deactivated',
  'billing_not_active',
]);
export const DISABLING_ERROR_TYPES: ReadonlySet<string> = new Set([
  'insufficient_quota',
  'insufficient_user_quota',
  'authentication_error',
  'permission_error',
  'forbidden',
]);

export interface DisableContext {
  /** The `AutomaticDisableChannelEnabled` option. */
  readonly automaticDisableEnabled: boolean;
  /** The channel's `auto_ban` flag. */
  readonly autoBan: boolean;
  /** The channel's provider answers 403 for a revoked key (Gemini); others use 403 for per-request refusals. */
  readonly forbiddenMeansRevokedKey?: boolean;
  /** The `AutomaticDisableKeywords` option compiled with `createWordMatcher` (case-insensitive). */
  readonly keywords: WordMatcher;
}

/** Why a channel should be switched off, or undefined when it should stay on. */
export function disableReason(error: RelayError, context: DisableContext): string | undefined {
  if (!context.automaticDisableEnabled || !context.autoBan || error.isLocal) return undefined;
  if (error.status === 401) return 'upstream answered 401 Unauthorized';
  if (error.status === 403 && context.forbiddenMeansRevokedKey) return 'upstream answered 403 Forbidden';
  if (typeof error.code === 'string' && DISABLING_ERROR_CODES.has(error.code)) {
    return `upstream error code ${error.code}`;
  }
  if (DISABLING_ERROR_TYPES.has(error.type)) return `upstream error type ${error.type}`;
  const [keyword] = context.keywords.findWords(error.message);
  if (keyword !== undefined) return `upstream error message contains "${keyword}"`;
  return undefined;
}

/** The message the client sees for a final 429 (the upstream's text may name another company's account). */
export const SATURATED_MESSAGE = 'the upstream channels of this group are saturated, please retry later';

/** A 400 for a request the gateway cannot relay as sent (a local error: never retried, nothing charged). */
export const invalidRequest = (message: string, param?: string): RelayError => ({
  ...localError(400, 'invalid_request', message, 'invalid_request_error'),
  param: param ?? null,
});

/** A fault of the upstream's answer (status 502), e.g. a body that is not JSON. */
export const upstreamFault = (message: string, code: string): RelayError => ({
  status: 502,
  message,
  type: 'upstream_error',
  code,
  param: null,
  isLocal: false,
});
