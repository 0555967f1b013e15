import type { Envelope } from '@turnpike/core/contracts/envelope';

/** A successful envelope. */
export function ok<T>(data?: T, message = ''): Envelope<T> {
  return data === undefined ? { success: true, message } : { success: true, message, data };
}
