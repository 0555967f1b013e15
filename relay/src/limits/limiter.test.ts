import { LimitKind, LimitScope } from '@turnpike/core/options/rate-limits';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { createMemoryCounterStore, waitForRoom } from './counters.ts';
import { formatReset } from './headers.ts';
import { type Check, channelChecks, checksOf, createLimiter, refusalError } from './limiter.ts';

const log = pino({ level: 'silent' });

function clock(start = 1_000_000) {
  let now = start;
  return {
    now: () => now,
    advance(ms: number) {
      now += ms;
    },
  };
}

const tokens = (limit: number, key = 't:1:tpm'): Check => ({
  scope: LimitScope.Token,
  kind: LimitKind.Tokens,
  key,
  limit,
  subject: 'this token',
});

describe('memory counters', () => {
  it('never admits more than the limit over a window, however many ask at once', async () => {
    const time = clock();
    const store = createMemoryCounterStore({ now: time.now });
    const request = (member: string) =>
      store.admit({
        rates: [{ key: 'm:gpt:tpm', limit: 1000, amount: 70 }],
        slots: [],
        member,
        windowMs: 60_000,
        leaseMs: 60_000,
      });
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => request(`r${i}`)));
    const admitted = results.filter((r) => r.ok).length;
    expect(admitted).toBe(14); // 14 x 70 = 980 <= 1000 < 15 x 70
    // Still refused just before the window has passed since the first admission ...
    time.advance(59_000);
    expect((await request('late')).ok).toBe(false);
    // ... and admitted once it has.
    time.advance(2_000);
    expect((await request('next')).ok).toBe(true);
  });

  it('says how long until the amount fits again', () => {
    // Buckets of 1 s: 600 tokens at bucket 100, 300 at bucket 130; a limit of 1000 and a request of 400.
    const wait = waitForRoom(
      [
        [100, 600],
        [130, 300],
      ],
      900,
      400,
      1000,
      150_000,
      60_000,
    );
    // Bucket 100 leaves the window at (100 + 1) * 1000 + 60 000 = 161 000 ms.
    expect(wait).toBe(11_000);
    expect(waitForRoom([], 0, 2000, 1000, 0, 60_000)).toBe(60_000);
  });

  it('frees a lease on release, and takes back a lease nobody renewed when it expires', async () => {
    const time = clock();
    const store = createMemoryCounterStore({ now: time.now });
    const slot = (member: string) =>
      store.admit({
        rates: [],
        slots: [{ key: 'c:1:conc', limit: 1 }],
        member,
        windowMs: 60_000,
        leaseMs: 5_000,
      });
    expect((await slot('a')).ok).toBe(true);
    expect(await slot('b')).toMatchObject({ ok: false, refused: { type: 'slot', index: 0 } });
    await store.release(['c:1:conc'], 'a');
    expect((await slot('b')).ok).toBe(true);
    // b's relay crashed: nobody releases or renews it.
    time.advance(4_000);
    expect((await slot('c')).ok).toBe(false);
    time.advance(1_001);
    expect((await slot('c')).ok).toBe(true);
    // A renewed lease outlives its first term.
    time.advance(4_000);
    await store.renew(['c:1:conc'], 'c', 5_000);
    time.advance(4_000);
    expect((await slot('d')).ok).toBe(false);
  });

  it('adds nothing to any counter when one of them is full (all or nothing)', async () => {
    const store = createMemoryCounterStore();
    const both = (member: string) =>
      store.admit({
        rates: [
          { key: 'u:1:rpm', limit: 10, amount: 1 },
          { key: 't:1:rpm', limit: 1, amount: 1 },
        ],
        slots: [],
        member,
        windowMs: 60_000,
        leaseMs: 60_000,
      });
    expect((await both('a')).ok).toBe(true);
    const refused = await both('b');
    expect(refused).toMatchObject({ ok: false, refused: { type: 'rate', index: 1 }, rateUsed: [1, 1] });
    const user = await store.admit({
      rates: [{ key: 'u:1:rpm', limit: 10, amount: 0 }],
      slots: [],
      member: 'probe',
      windowMs: 60_000,
      leaseMs: 60_000,
    });
    expect(user.rateUsed).toEqual([1]);
  });
});

describe('limiter', () => {
  it('charges the estimate, then the real usage once settled', async () => {
    const store = createMemoryCounterStore();
    const limiter = createLimiter({ store, log });
    const admit = (estimate: number) =>
      limiter.admit({ checks: [tokens(1000)], estimateTokens: () => estimate, isAnthropic: false });
    const first = await admit(800);
    expect(first.ok).toBe(true);
    expect((await admit(300)).ok).toBe(false);
    // The answer used 100 tokens, not 800: 900 are free again.
    if (first.ok) first.ticket?.settle(100);
    await new Promise((resolve) => setImmediate(resolve));
    expect((await admit(850)).ok).toBe(true);
    expect((await admit(100)).ok).toBe(false);
    limiter.close();
  });

  it('refuses with a 429 that names the limit, its scope and when to come back, with the headers', async () => {
    const limiter = createLimiter({ store: createMemoryCounterStore(), log });
    const checks = checksOf(LimitScope.Model, 'm:gpt-4o', 'the model gpt-4o', { rpm: 1, tpm: 500 });
    const input = { checks, estimateTokens: () => 200, isAnthropic: true };
    expect((await limiter.admit(input)).ok).toBe(true);
    const refused = await limiter.admit(input);
    expect(refused.ok).toBe(false);
    if (refused.ok) return;
    expect(refused).toMatchObject({ scope: 'model', kind: 'requests' });
    expect(refused.error).toMatchObject({
      status: 429,
      type: 'rate_limit_error',
      code: 'rate_limit_exceeded',
    });
    expect(refused.error.message).toContain('at most 1 requests per minute for the model gpt-4o');
    expect(refused.headers).toMatchObject({
      'x-ratelimit-limit-requests': '1',
      'x-ratelimit-remaining-requests': '0',
      'x-ratelimit-limit-tokens': '500',
      'x-ratelimit-remaining-tokens': '300',
      'anthropic-ratelimit-requests-limit': '1',
      'anthropic-ratelimit-requests-remaining': '0',
      'anthropic-ratelimit-tokens-remaining': '300',
    });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(refused.headers['anthropic-ratelimit-requests-reset']).toMatch(
      /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/,
    );
    limiter.close();
  });

  it('says a request larger than the limit can never pass', () => {
    const error = refusalError(tokens(1000), 5000, 60_000);
    expect(error.message).toContain('needs about 5000 tokens');
    expect(error.message).toContain('lower max_tokens');
  });

  it('frees a concurrency slot exactly once, however many times it is settled', async () => {
    const limiter = createLimiter({ store: createMemoryCounterStore(), log });
    const input = {
      checks: channelChecks({ id: 3, limits: { concurrency: 1 } }),
      estimateTokens: () => 0,
      isAnthropic: false,
    };
    const first = await limiter.admit(input);
    expect((await limiter.admit(input)).ok).toBe(false);
    if (first.ok) {
      first.ticket?.settle(0);
      first.ticket?.settle(0);
    }
    await new Promise((resolve) => setImmediate(resolve));
    const second = await limiter.admit(input);
    expect(second.ok).toBe(true);
    expect((await limiter.admit(input)).ok).toBe(false);
    limiter.close();
  });

  it('keeps limits in this process when the shared store fails', async () => {
    const broken = createMemoryCounterStore();
    broken.admit = () => Promise.reject(new Error('redis is reconnecting'));
    const limiter = createLimiter({ store: broken, log });
    const input = { checks: [tokens(100)], estimateTokens: () => 60, isAnthropic: false };
    expect((await limiter.admit(input)).ok).toBe(true);
    expect((await limiter.admit(input)).ok).toBe(false);
    limiter.close();
  });

  it('formats resets as OpenAI does', () => {
    expect(formatReset(250)).toBe('250ms');
    expect(formatReset(1_200)).toBe('2s');
    expect(formatReset(360_000)).toBe('6m0s');
  });
});
