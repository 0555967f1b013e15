/**
 * Gemini errors (https://ai.google.dev/gemini-api/docs/troubleshooting): Google's RPC shape
 * `{ "error": { "code": 400, "message", "status": "INVALID_ARGUMENT" } }`. The `status` becomes the code, so
 * `PERMISSION_DENIED` (a revoked key, 403) can switch a channel off and `RESOURCE_EXHAUSTED` (429) is retried.
 */
import type { RelayError } from '../../contract.ts';
import { parseUpstreamError } from '../../errors.ts';
import { isRecord } from '../canonical.ts';

const STATUS_BY_HTTP: Readonly<Record<number, string>> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  413: 'INVALID_ARGUMENT',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  502: 'UNAVAILABLE',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

/** The RPC status name of an HTTP status (what the relay answers Gemini clients with). */
export const geminiStatus = (status: number): string =>
  STATUS_BY_HTTP[status] ?? (status >= 500 ? 'INTERNAL' : 'INVALID_ARGUMENT');

export function readGeminiError(status: number, body: string): RelayError {
  const parsed = parseUpstreamError(status, body);
  let rpcStatus: string | undefined;
  try {
    const value: unknown = JSON.parse(body);
    const inner: unknown = Array.isArray(value) ? value[0] : value;
    if (isRecord(inner) && isRecord(inner.error) && typeof inner.error.status === 'string')
      rpcStatus = inner.error.status;
  } catch {
    rpcStatus = undefined;
  }
  if (rpcStatus === undefined) return parsed;
  return {
    ...parsed,
    type: rpcStatus === 'PERMISSION_DENIED' ? 'permission_error' : parsed.type,
    code: rpcStatus,
  };
}
