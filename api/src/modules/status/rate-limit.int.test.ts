import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../testing/test-app.ts';

describe('per-IP rate limits', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({
      env: {
        GLOBAL_API_RATE_LIMIT: '5',
        GLOBAL_API_RATE_LIMIT_DURATION: '60',
        CRITICAL_RATE_LIMIT: '2',
        CRITICAL_RATE_LIMIT_DURATION: '60',
      },
    });
  });
  afterAll(async () => {
    await t.close();
  });

  it('answers 429 in the envelope once an address uses up the strict sign-in limit', async () => {
    const attempt = () =>
      t.app.inject({
        method: 'POST',
        url: '/api/user/login',
        payload: { username: 'x', password: 'y' },
        remoteAddress: '10.1.1.1',
      });
    // The windows are fixed (aligned to the clock), so a run that straddles a window's end starts counting again:
    // the limit shows within two windows' worth of attempts.
    const statuses: number[] = [];
    let limited = await attempt();
    while (limited.statusCode !== 429 && statuses.length < 4) {
      statuses.push(limited.statusCode);
      limited = await attempt();
    }
    expect(statuses.every((status) => status === 400)).toBe(true);
    expect(statuses.length).toBeGreaterThanOrEqual(2);
    expect(limited.statusCode).toBe(429);
    expect(limited.json()).toMatchObject({ success: false, code: 'RATE_LIMITED' });
    // The window is 60 s: a retry is due when it ends, and the headers say so.
    const retryAfter = Number(limited.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(limited.headers).toMatchObject({
      'x-ratelimit-limit': '2',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': String(retryAfter),
    });
  });

  it('applies the general limit to every /api call, per address', async () => {
    const statuses = [];
    for (let i = 0; i < 6; i++) {
      statuses.push(
        (await t.app.inject({ method: 'GET', url: '/api/status', remoteAddress: '10.2.2.2' })).statusCode,
      );
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    const other = await t.app.inject({ method: 'GET', url: '/api/status', remoteAddress: '10.3.3.3' });
    expect(other.statusCode).toBe(200);
  });
});
