import type { OptionStore } from '@turnpike/core/options/store';
import { describe, expect, it } from 'vitest';
import { callerWindows, windowChecks, windowRefusal } from './windows.ts';

// Instants from the zones' published rules (IANA tz database): Shanghai is UTC+8 all year.
const at = (iso: string) => Date.parse(iso) / 1000;

const options = (groups: Record<string, unknown>) =>
  ({ get: (key: string) => (key === 'GroupQuotaWindows' ? groups : undefined) }) as unknown as OptionStore;

describe('the windows of a caller', () => {
  it('are nothing at all for a caller without any: the same empty list, nothing built', () => {
    const caller = { user: { id: 5, group: 'default' }, token: { id: 12, quotaWindows: [] } };
    const none = callerWindows(options({}), caller, true);
    expect(none).toEqual([]);
    expect(callerWindows(options({ vip: [] }), caller, true)).toBe(none);
  });

  it("are the token's, the user's and the user's group's, each user's group window its own", () => {
    const day = { unit: 'quota', limit: 100, period: 'day' } as const;
    const windows = callerWindows(
      options({ vip: [{ unit: 'requests', limit: 3, period: 'day' }] }),
      { user: { id: 5, group: 'vip', quotaWindows: [day] }, token: { id: 12, quotaWindows: [day] } },
      true,
    );
    expect(windowChecks(windows, at('2026-11-29T10:00:00Z'), 'UTC').map((c) => c.key)).toEqual([
      't:12|quota:day',
      'u:5|quota:day',
      'g:vip:5|requests:day',
    ]);
    // No token pays in the playground: its windows do not apply.
    expect(
      callerWindows(
        options({}),
        { user: { id: 5, group: 'default' }, token: { id: 0, quotaWindows: [day] } },
        false,
      ),
    ).toEqual([]);
  });
});

describe('window checks at a moment', () => {
  const daily = [
    { owner: { kind: 'token', id: 1 }, window: { unit: 'quota', limit: 100, period: 'day' } },
  ] as const;

  it('hold a day in the configured zone, and move to the next day at its midnight', () => {
    // Shanghai's 2026-11-29 runs from 16:00 UTC on the 28th to 16:00 UTC on the 29th.
    const [before] = windowChecks(daily, at('2026-11-29T15:59:59Z'), 'Asia/Shanghai');
    expect(before).toMatchObject({
      slot: at('2026-11-28T16:00:00Z'),
      step: 0,
      slots: 1,
      end: at('2026-11-29T16:00:00Z'),
    });
    const [after] = windowChecks(daily, at('2026-11-29T16:00:00Z'), 'Asia/Shanghai');
    expect(after).toMatchObject({ slot: at('2026-11-29T16:00:00Z'), end: at('2026-11-30T16:00:00Z') });
    // The same moment in UTC is another day.
    expect(windowChecks(daily, at('2026-11-29T15:59:59Z'), 'UTC')[0]?.slot).toBe(at('2026-11-29T00:00:00Z'));
  });

  it('hold a rolling 5-hour window in 60 buckets of 5 minutes', () => {
    const rolling = [
      { owner: { kind: 'user', id: 5 }, window: { unit: 'quota', limit: 100, period: 'rolling', hours: 5 } },
    ] as const;
    expect(windowChecks(rolling, at('2026-11-29T10:07:30Z'), 'UTC')[0]).toMatchObject({
      key: 'u:5|quota:5h',
      slot: at('2026-11-29T10:05:00Z'),
      step: 300,
      slots: 60,
    });
  });
});

describe('the refusal of a window', () => {
  it('says a call larger than the whole window cannot pass, and when a requests window resets', () => {
    const [check] = windowChecks(
      [{ owner: { kind: 'token', id: 1 }, window: { unit: 'quota', limit: 100, period: 'week' } }],
      at('2026-11-29T10:00:00Z'),
      'UTC',
    );
    const tooLarge = windowRefusal(
      check!,
      { claim: check!, available: 100 },
      150,
      at('2026-11-29T10:00:00Z'),
    );
    expect(tooLarge.error.message).toBe(
      "this call may cost up to 150, more than the token's weekly quota window allows in all (100); lower max_tokens",
    );
    // 2026-11-29 is a Sunday: the week resets on Monday the 30th, 14 hours on.
    expect(tooLarge.error.retryAfterSeconds).toBe(14 * 3_600);
    const [requests] = windowChecks(
      [
        {
          owner: { kind: 'group', group: 'vip', userId: 5 },
          window: { unit: 'requests', limit: 3, period: 'month' },
        },
      ],
      at('2026-11-29T10:00:00Z'),
      'UTC',
    );
    const used = windowRefusal(
      requests!,
      { claim: requests!, available: 0 },
      900,
      at('2026-11-29T10:00:00Z'),
    );
    expect(used.error).toMatchObject({
      status: 429,
      code: 'quota_window_exceeded',
      type: 'rate_limit_error',
    });
    expect(used.error.message).toBe(
      "the monthly request window of the group vip (each user's own) is used up (3 requests); it resets at 2026-12-01T00:00:00Z",
    );
    expect(used.headers).toEqual({
      'x-turnpike-window': 'group:vip requests:month',
      'x-turnpike-window-limit': '3',
      'x-turnpike-window-remaining': '0',
      'x-turnpike-window-reset': '2026-12-01T00:00:00Z',
    });
  });
});
