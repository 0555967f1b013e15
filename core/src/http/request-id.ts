/**
 * The id of a request: the caller's `x-request-id` when it is a plausible id (so a trace can follow a call across
 * a proxy in front of Turnpike), else a new UUID. Every answer carries it back in `x-request-id`, and logs name it.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

const REQUEST_ID = /^[\w.:-]{1,64}$/;

export function requestIdOf(headers: IncomingHttpHeaders): string {
  const incoming = headers['x-request-id'];
  return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
}
