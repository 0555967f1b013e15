import { AppError } from '@turnpike/core/errors';
import type { FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import type { AppDeps } from '../deps.ts';
import { readSession, SESSION_COOKIE, type SessionCodec, writeSession } from './session.ts';

export interface TurnstileCheckOptions {
  /** Cloudflare's siteverify endpoint; defaults to the configured TURNSTILE_VERIFY_URL. */
  readonly verifyUrl?: string;
  readonly timeoutMs?: number;
}

interface SiteverifyAnswer {
  success?: unknown;
  'error-codes'?: unknown;
}

const queryToken = (request: FastifyRequest): string => {
  const value = (request.query as Record<string, unknown> | undefined)?.turnstile;
  return typeof value === 'string' ? value.trim() : '';
};

/**
 * The human check of sign-in, registration, verification and reset. When TurnstileCheckEnabled, the request
 * carries `?turnstile=<token>`, which is checked against Cloudflare's siteverify with the secret key and the
 * caller's IP. As in the reference, a pass is remembered in the session, so the console's one widget answer
 * covers the next calls of that browser (a Turnstile token can be verified only once).
 */
export function createTurnstileCheck(
  deps: AppDeps,
  sessions: SessionCodec,
  options: TurnstileCheckOptions = {},
): preHandlerAsyncHookHandler {
  const verifyUrl = options.verifyUrl ?? deps.config.turnstileVerifyUrl;
  const timeoutMs = options.timeoutMs ?? 10_000;

  return async (request, reply) => {
    if (!deps.options.get('TurnstileCheckEnabled')) return;
    const session = readSession(request, sessions);
    if (session.turnstile) return;
    const token = queryToken(request);
    if (!token) {
      throw new AppError(
        'VALIDATION_FAILED',
        'the human check has not finished; wait a few seconds and try again',
      );
    }
    let answer: SiteverifyAnswer;
    try {
      const response = await fetch(verifyUrl, {
        method: 'POST',
        body: new URLSearchParams({
          secret: deps.options.get('TurnstileSecretKey'),
          response: token,
          remoteip: request.ip,
        }),
        signal: AbortSignal.timeout(timeoutMs),
      });
      if (!response.ok) throw new Error(`siteverify answered HTTP ${response.status}`);
      answer = (await response.json()) as SiteverifyAnswer;
    } catch (error) {
      request.log.warn({ err: error }, 'turnstile verification unavailable');
      throw new AppError('INTERNAL', 'the human check could not be verified right now; try again later', {
        status: 502,
        cause: error,
      });
    }
    if (answer.success !== true) {
      request.log.info({ errorCodes: answer['error-codes'] }, 'turnstile check failed');
      throw new AppError('FORBIDDEN', 'the human check failed; refresh the page and try again');
    }
    const next = { ...session, turnstile: true };
    // Handlers later in this request (login) read the session from the request: let them see the pass.
    request.cookies[SESSION_COOKIE] = sessions.encode(next);
    writeSession(request, reply, sessions, next);
  };
}
