import { describeUnreachable, isDatabaseUnreachable } from '@turnpike/core/db/unreachable';
import { isAppError } from '@turnpike/core/errors';
import { edgeErrorBody } from '@turnpike/core/http/edge-errors';
import type {
  FastifyError,
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  FastifyServerOptions,
} from 'fastify';

/**
 * Fastify's `frameworkErrors`: the router's own refusals (a path parameter over its length limit, a path that does
 * not decode), which no error handler sees, in the caller's shape (`/api`: the envelope) instead of Fastify's.
 */
function answerRouterRefusal(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const path = request.url.split('?', 1)[0];
  const body =
    error.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? edgeErrorBody(path, 414, 'URI_TOO_LONG', 'a part of the request address is too long', request.method)
      : edgeErrorBody(
          path,
          400,
          'BAD_URL',
          'the request address is not valid percent-encoding',
          request.method,
        );
  void reply
    .code(error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 414 : 400)
    .header('x-request-id', request.id)
    .send(body);
}
export const answerFrameworkError = answerRouterRefusal as FastifyServerOptions['frameworkErrors'];

/** Seconds a client is asked to wait before trying again while the database is unreachable. */
export const DATABASE_RETRY_AFTER_SECONDS = 5;

/** The envelope of a call that needed the database while it is unreachable. */
export const DATABASE_UNAVAILABLE_BODY = {
  success: false,
  message: 'the database is unreachable; try again shortly',
  code: 'DATABASE_UNAVAILABLE',
} as const;

/**
 * The one place errors become envelopes. AppErrors keep their status and message; Fastify's own 4xx errors
 * (bad JSON, body too large) keep theirs; the database being unreachable (an outage, a failover) is a 503 with
 * Retry-After (a signed-in user stays signed in: their session is not refused, the call is); anything else is
 * a 500 that says nothing about the internals.
 */
export function registerErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (isAppError(error)) {
      return reply.status(error.status).send({ success: false, message: error.message, code: error.code });
    }
    if (isDatabaseUnreachable(error)) {
      request.log.warn({ reason: describeUnreachable(error) }, 'the database is unreachable');
      return reply
        .status(503)
        .header('retry-after', String(DATABASE_RETRY_AFTER_SECONDS))
        .send(DATABASE_UNAVAILABLE_BODY);
    }
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      return reply
        .status(status)
        .send({ success: false, message: error.message, code: error.code ?? 'BAD_REQUEST' });
    }
    request.log.error({ err: error }, 'request failed');
    return reply.status(500).send({
      success: false,
      message: `internal server error (request id ${request.id})`,
      code: 'INTERNAL',
    });
  });
}
