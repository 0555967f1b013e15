import { describe, expect, it } from 'vitest';
import { calendarPeriod, countedSpan, quotaWindowsSchema, slotOf, windowKey } from './quota-windows.ts';

// Expected instants are written from the zones' published rules (IANA tz database): Shanghai is UTC+8 all year;
// New York moves to EDT (UTC-4) at 02:00 on 2026-03-08 and back to EST (UTC-5) at 02:00 on 2026-11-01; Santiago
// moves to UTC-3 at 24:00 on 2026-09-05 (so 2026-09-06 starts at 01:00 local).
const at = (iso: string) => Date.parse(iso) / 1000;
const iso = (seconds: number) => new Date(seconds * 1000).toISOString();

describe('calendar periods in a time zone', () => {
  it('a day in Shanghai starts at 16:00 UTC the day before', () => {
    const span = calendarPeriod('day', at('2026-11-29T10:00:00Z'), 'Asia/Shanghai');
    expect([iso(span.start), iso(span.end)]).toEqual([
      '2026-11-28T16:00:00.000Z',
      '2026-11-29T16:00:00.000Z',
    ]);
  });

  it('the day New York moves its clocks forward has 23 hours', () => {
    const span = calendarPeriod('day', at('2026-03-08T12:00:00Z'), 'America/New_York');
    expect([iso(span.start), iso(span.end)]).toEqual([
      '2026-03-08T05:00:00.000Z',
      '2026-03-09T04:00:00.000Z',
    ]);
  });

  it('the day New York moves its clocks back has 25 hours', () => {
    const span = calendarPeriod('day', at('2026-11-01T12:00:00Z'), 'America/New_York');
    expect([iso(span.start), iso(span.end)]).toEqual([
      '2026-11-01T04:00:00.000Z',
      '2026-11-02T05:00:00.000Z',
    ]);
  });

  it('a day whose midnight Santiago skips starts at 01:00 local', () => {
    const span = calendarPeriod('day', at('2026-09-06T12:00:00Z'), 'America/Santiago');
    expect(iso(span.start)).toBe('2026-09-06T04:00:00.000Z');
    const before = calendarPeriod('day', at('2026-09-05T12:00:00Z'), 'America/Santiago');
    expect([iso(before.start), iso(before.end)]).toEqual([
      '2026-09-05T04:00:00.000Z',
      '2026-09-06T04:00:00.000Z',
    ]);
  });

  it('a week runs Monday to Monday (2026-11-29 is a Sunday)', () => {
    const span = calendarPeriod('week', at('2026-11-29T23:59:59Z'), 'UTC');
    expect([iso(span.start), iso(span.end)]).toEqual([
      '2026-11-23T00:00:00.000Z',
      '2026-11-30T00:00:00.000Z',
    ]);
    const monday = calendarPeriod('week', at('2026-11-30T00:00:00Z'), 'UTC');
    expect(iso(monday.start)).toBe('2026-11-30T00:00:00.000Z');
  });

  it('a month ends where the next begins, across a year', () => {
    const span = calendarPeriod('month', at('2026-12-31T20:00:00Z'), 'Asia/Shanghai');
    // 2027-01-01 04:00 in Shanghai: already January there.
    expect([iso(span.start), iso(span.end)]).toEqual([
      '2026-12-31T16:00:00.000Z',
      '2027-01-31T16:00:00.000Z',
    ]);
  });
});

describe('rolling windows', () => {
  it('a 5-hour window keeps 60 buckets of 5 minutes, the oldest counted whole', () => {
    const window = { unit: 'quota', limit: 100, period: 'rolling', hours: 5 } as const;
    const now = at('2026-11-29T10:07:30Z');
    expect(iso(slotOf(window, now, 'UTC').start)).toBe('2026-11-29T10:05:00.000Z');
    const span = countedSpan(window, now, 'UTC');
    expect([iso(span.start), iso(span.end)]).toEqual([
      '2026-11-29T05:10:00.000Z',
      '2026-11-29T10:10:00.000Z',
    ]);
  });
});

describe('the stored shape', () => {
  it('refuses what cannot work, with the reason', () => {
    const problems = (value: unknown) => {
      const parsed = quotaWindowsSchema.safeParse(value);
      return parsed.success ? [] : parsed.error.issues.map((issue) => issue.message);
    };
    expect(problems([{ unit: 'quota', limit: 2_500_000, period: 'day' }])).toEqual([]);
    expect(problems([{ unit: 'quota', limit: 0, period: 'day' }])).toEqual(['limit must be more than 0']);
    expect(problems([{ unit: 'quota', limit: 5, period: 'rolling' }])).toEqual([
      'a rolling window needs "hours", and only a rolling window has them',
    ]);
    expect(
      problems([
        { unit: 'quota', limit: 5, period: 'day' },
        { unit: 'quota', limit: 9, period: 'day' },
      ]),
    ).toEqual(['two windows have the same unit and period']);
  });

  it('names a window by owner, unit and period, not by limit', () => {
    expect(windowKey({ kind: 'token', id: 12 }, { unit: 'quota', period: 'day' })).toBe('t:12|quota:day');
    expect(
      windowKey({ kind: 'group', group: 'vip', userId: 5 }, { unit: 'quota', period: 'rolling', hours: 5 }),
    ).toBe('g:vip:5|quota:5h');
  });
});
