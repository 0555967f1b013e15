import type { RateLimit } from '@turnpike/core/config';
import { AppError } from '@turnpike/core/errors';
import { createMemoryKv, type KvStore } from '@turnpike/core/kv/kv';
import type { FastifyRequest, onRequestAsyncHookHandler } from 'fastify';

/**
 * Fixed-window per-IP limiter over the shared KV store: one INCR per request, shared across replicas through
 * Redis, bounded in memory otherwise. `name` keeps the general and the strict limit apart. When the shared
 * store cannot be reached the count falls back to this process's own (`fallback`), so a Redis outage limits
 * per process instead of failing every request. Every answer carries `X-RateLimit-Limit`, `-Remaining` and
 * `-Reset` (seconds until the window ends); a 429 also `Retry-After`.
 */
export function createRateLimit(
  kv: KvStore,
  name: string,
  limit: RateLimit,
  fallback: KvStore = createMemoryKv(10_000),
): onRequestAsyncHookHandler {
  return async (request: FastifyRequest, reply) => {
    if (!limit.enabled) return;
    const nowSeconds = Date.now() / 1000;
    const window = Math.floor(nowSeconds / limit.windowSeconds);
    const key = `${name}:${request.ip}:${window}`;
    const count = await kv
      .incr(key, limit.windowSeconds)
      .catch(() => fallback.incr(key, limit.windowSeconds));
    const reset = Math.max(1, Math.ceil((window + 1) * limit.windowSeconds - nowSeconds));
    reply.header('x-ratelimit-limit', limit.max);
    reply.header('x-ratelimit-remaining', Math.max(0, limit.max - count));
    reply.header('x-ratelimit-reset', reset);
    if (count > limit.max) {
      reply.header('retry-after', reset);
      throw new AppError('RATE_LIMITED', 'too many requests, try again later');
    }
  };
}
