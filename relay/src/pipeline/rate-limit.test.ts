import type { OptionStore } from '@turnpike/core/options/store';
import type { FastifyBaseLogger } from 'fastify';
import { describe, expect, it } from 'vitest';
import type { RelayReply, RelayRequest } from '../contract.ts';
import type { Caller } from '../state/auth-cache.ts';
import {
  createMemoryRateLimitStore,
  createRateLimiter,
  type RateLimitStore,
  type RateLimits,
  rateLimitError,
} from './rate-limit.ts';

const clock = () => {
  let at = 1_000_000;
  return { now: () => at, advance: (ms: number) => (at += ms) };
};

describe('memory rate limit store', () => {
  it('refuses the request over the total limit until the oldest one leaves the window', async () => {
    const time = clock();
    const store = createMemoryRateLimitStore({ now: time.now });
    const limits: RateLimits = { total: 3, success: 100, windowMs: 60_000 };
    for (let i = 0; i < 3; i += 1) {
      expect(await store.admit(1, limits)).toEqual({ ok: true });
      time.advance(1000);
    }
    expect(await store.admit(1, limits)).toEqual({ ok: false, limit: 'total', retryAfterMs: 57_000 });
    // Another user has a window of its own.
    expect(await store.admit(2, limits)).toEqual({ ok: true });
    time.advance(57_000);
    expect(await store.admit(1, limits)).toEqual({ ok: true });
    // A refused request was not counted: exactly one slot was freed and taken.
    expect((await store.admit(1, limits)).ok).toBe(false);
  });

  it('counts only recorded successes against the success limit, and 0 total means unlimited', async () => {
    const time = clock();
    const store = createMemoryRateLimitStore({ now: time.now });
    const limits: RateLimits = { total: 0, success: 2, windowMs: 10_000 };
    for (let i = 0; i < 10; i += 1) expect((await store.admit(7, limits)).ok).toBe(true);
    await store.recordSuccess(7, limits);
    expect((await store.admit(7, limits)).ok).toBe(true);
    await store.recordSuccess(7, limits);
    expect(await store.admit(7, limits)).toEqual({ ok: false, limit: 'success', retryAfterMs: 10_000 });
    time.advance(10_000);
    expect((await store.admit(7, limits)).ok).toBe(true);
  });

  it('forgets the least recently seen users beyond its bound', async () => {
    const store = createMemoryRateLimitStore({ maxUsers: 50 });
    const limits: RateLimits = { total: 1, success: 1, windowMs: 60_000 };
    for (let id = 1; id <= 200; id += 1) await store.admit(id, limits);
    expect(store.size).toBe(50);
    // User 200 is still tracked (refused), user 1 was forgotten (admitted again).
    expect((await store.admit(200, limits)).ok).toBe(false);
    expect((await store.admit(1, limits)).ok).toBe(true);
  });
});

describe('rate limit error', () => {
  it('is a local 429 naming the limit and the window', () => {
    const error = rateLimitError(
      { ok: false, limit: 'total', retryAfterMs: 1 },
      { total: 5, success: 10, windowMs: 120_000 },
    );
    expect(error).toMatchObject({ status: 429, isLocal: true, code: 'rate_limit_exceeded' });
    expect(error.message).toContain('5 requests per 2 minutes');
    const success = rateLimitError(
      { ok: false, limit: 'success', retryAfterMs: 1 },
      { total: 0, success: 10, windowMs: 60_000 },
    );
    expect(success.message).toContain('10 successful requests per 1 minute');
  });
});

describe('rate limiter while its shared store is unreachable', () => {
  it('keeps the limit in this process instead of admitting everything, and says when to retry', async () => {
    const values: Record<string, unknown> = {
      ModelRequestRateLimitEnabled: true,
      ModelRequestRateLimitGroup: {},
      ModelRequestRateLimitCount: 2,
      ModelRequestRateLimitSuccessCount: 0,
      ModelRequestRateLimitDurationMinutes: 1,
    };
    const broken: RateLimitStore = {
      admit: async () => {
        throw new Error('connection refused');
      },
      recordSuccess: async () => {
        throw new Error('connection refused');
      },
    };
    const warnings: string[] = [];
    const limiter = createRateLimiter({
      options: { get: (key: string) => values[key] } as unknown as OptionStore,
      store: broken,
      log: { warn: (_o: unknown, message: string) => warnings.push(message) } as unknown as FastifyBaseLogger,
    });
    const headers: Record<string, string> = {};
    const reply = {
      header: (name: string, value: string) => {
        headers[name] = value;
      },
      raw: { once: () => {} },
    } as unknown as RelayReply;
    const caller = { user: { id: 9 }, group: 'default' } as unknown as Caller;
    expect(await limiter.admit({} as RelayRequest, reply, caller)).toBeUndefined();
    expect(await limiter.admit({} as RelayRequest, reply, caller)).toBeUndefined();
    const refused = await limiter.admit({} as RelayRequest, reply, caller);
    expect(refused).toMatchObject({ status: 429, code: 'rate_limit_exceeded' });
    expect(headers).toMatchObject({ 'x-ratelimit-limit': '2', 'x-ratelimit-remaining': '0' });
    expect(Number(headers['retry-after'])).toBeGreaterThan(0);
    expect(headers['x-ratelimit-reset']).toBe(headers['retry-after']);
    expect(warnings).toEqual(['rate limit store unavailable; limits are kept by this process alone']);
  });
});
