import { findUnstorableText } from '@turnpike/core/contracts/storable-text';
import { AppError } from '@turnpike/core/errors';
import type { FastifyRequest } from 'fastify';

const MAX_SHOWN_PATH = 80;

/**
 * Refuses text Postgres cannot store (a NUL byte, a lone surrogate) anywhere in a request's path parameters,
 * query string or body, before any handler or gate runs: a 400 in the envelope naming the field, instead of a 500
 * when a query meets it. A `preValidation` hook of the /api scope.
 */
export async function refuseUnstorableText(request: FastifyRequest): Promise<void> {
  for (const [part, value] of [
    ['path', request.params],
    ['query', request.query],
    ['body', request.body],
  ] as const) {
    const field = findUnstorableText(value);
    if (field === undefined) continue;
    const shown = field.length > MAX_SHOWN_PATH ? `${field.slice(0, MAX_SHOWN_PATH)}…` : field;
    throw new AppError(
      'VALIDATION_FAILED',
      `${shown ? `${part} field ${shown}` : `the ${part}`} contains a NUL byte or an unpaired surrogate, which cannot be stored`,
    );
  }
}
