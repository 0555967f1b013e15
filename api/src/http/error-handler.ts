import { isAppError } from '@turnpike/core/errors';
import type { FastifyError, FastifyInstance } from 'fastify';

/**
 * The one place errors become envelopes. AppErrors keep their status and message; Fastify's own 4xx errors
 * (bad JSON, body too large) keep theirs; anything else is a 500 that says nothing about the internals.
 */
export function registerErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (isAppError(error)) {
      return reply.status(error.status).send({ success: false, message: error.message, code: error.code });
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
