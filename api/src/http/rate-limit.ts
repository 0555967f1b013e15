import type { RateLimit } from '@turnpike/core/config';
import { AppError } from '@turnpike/core/errors';
import type { KvStore } from '@turnpike/core/kv/kv';
import type { FastifyRequest, onRequestAsyncHookHandler } from 'fastify';

/**
 * Fixed-window per-IP limiter over the shared KV store: one INCR per request, shared across replicas through
 * Redis, bounded in memory otherwise. `name` keeps the general and the strict limit apart.
 */
export function createRateLimit(kv: KvStore, name: string, limit: RateLimit): onRequestAsyncHookHandler {
  return async (request: FastifyRequest, reply) => {
    if (!limit.enabled) return;
    const window = Math.floor(Date.now() / 1000 / limit.windowSeconds);
    const count = await kv.incr(`${name}:${request.ip}:${window}`, limit.windowSeconds);
    reply.header('x-ratelimit-limit', limit.max);
    reply.header('x-ratelimit-remaining', Math.max(0, limit.max - count));
    if (count > limit.max) {
      reply.header('retry-after', limit.windowSeconds);
      throw new AppError('RATE_LIMITED', 'too many requests, try again later');
    }
  };
}
