/**
 * Why an upstream request failed before or while its response arrived, in the relay's terms: what undici and the
 * socket report, mapped to a kind (a refused connection is retried elsewhere; an abort is the client's doing).
 */
import { errors } from 'undici';

/** Why an upstream request failed before or while its response arrived. */
export type UpstreamFailureKind = 'connect' | 'timeout' | 'aborted' | 'socket';

/**
 * A transport failure (no HTTP status): connection refused, timeout, reset, or our own abort. The message never
 * contains the upstream URL, which may carry keys or private addresses.
 */
export class UpstreamFailure extends Error {
  readonly kind: UpstreamFailureKind;
  constructor(kind: UpstreamFailureKind, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'UpstreamFailure';
    this.kind = kind;
  }
}

/** Maps undici and socket errors to {@link UpstreamFailure}. */
export function toUpstreamFailure(error: unknown): UpstreamFailure {
  if (error instanceof UpstreamFailure) return error;
  if (error instanceof errors.ConnectTimeoutError)
    return new UpstreamFailure('timeout', 'upstream connect timeout', { cause: error });
  if (error instanceof errors.HeadersTimeoutError)
    return new UpstreamFailure('timeout', 'upstream response timeout', { cause: error });
  if (error instanceof errors.BodyTimeoutError)
    return new UpstreamFailure('timeout', 'upstream stream timeout', { cause: error });
  if (
    error instanceof errors.RequestAbortedError ||
    (error instanceof Error && error.name === 'AbortError')
  ) {
    return new UpstreamFailure('aborted', 'upstream request aborted', { cause: error });
  }
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EHOSTUNREACH') {
    return new UpstreamFailure('connect', 'upstream connection failed', { cause: error });
  }
  return new UpstreamFailure('socket', 'upstream connection error', { cause: error });
}
