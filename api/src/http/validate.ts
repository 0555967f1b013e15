import { AppError } from '@turnpike/core/errors';
import type { z } from 'zod';

/** Parses input with a contract schema; the first problem becomes a clear 400 in the envelope. */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.infer<S> {
  const result = schema.safeParse(input ?? {});
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const field = issue?.path.length ? String(issue.path.join('.')) : '';
  const message = issue?.message ?? 'invalid request';
  throw new AppError(
    'VALIDATION_FAILED',
    issue?.code === 'invalid_type' && field && !message.includes(field) ? `${field}: ${message}` : message,
  );
}

/** A positive integer path parameter, or a 400. */
export function parseId(raw: unknown, name = 'id'): number {
  const id = Number(raw);
  if (!Number.isSafeInteger(id) || id <= 0)
    throw new AppError('VALIDATION_FAILED', `${name} must be a positive integer`);
  return id;
}
