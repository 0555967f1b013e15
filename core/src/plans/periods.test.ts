import { describe, expect, it } from 'vitest';
import {
  allowanceKey,
  allowanceLimit,
  allowancePeriod,
  isRunning,
  subscriptionEnd,
  UNLIMITED_ALLOWANCE,
} from './periods.ts';

// Moments as Unix seconds, worked out from the calendar (not from this code).
const NOV_28_2359 = 1_795_910_340; // 2026-11-28 23:59:00 UTC
const JAN_31_NOON = 1_769_860_800; // 2026-01-31 12:00:00 UTC

const plan = (
  durationUnit: 'year' | 'month' | 'day' | 'hour' | 'custom',
  durationValue = 1,
  customSeconds = 0,
) => ({
  durationUnit,
  durationValue,
  customSeconds,
});

describe('subscriptionEnd', () => {
  it('adds calendar months and years in UTC, and days and hours as fixed lengths', () => {
    // 2026-12-28 23:59:00 and 2027-11-28 23:59:00 UTC.
    expect(subscriptionEnd(NOV_28_2359, plan('month'))).toBe(1_798_502_340);
    expect(subscriptionEnd(NOV_28_2359, plan('year'))).toBe(1_827_446_340);
    // A month from 31 January overflows February as a calendar does: 2026-03-03 12:00 UTC.
    expect(subscriptionEnd(JAN_31_NOON, plan('month'))).toBe(1_772_539_200);
    expect(subscriptionEnd(NOV_28_2359, plan('day', 7))).toBe(NOV_28_2359 + 604_800);
    expect(subscriptionEnd(NOV_28_2359, plan('hour', 5))).toBe(NOV_28_2359 + 18_000);
    expect(subscriptionEnd(NOV_28_2359, plan('custom', 0, 90))).toBe(NOV_28_2359 + 90);
  });
});

describe('allowancePeriod', () => {
  const terms = {
    id: 7,
    amountTotal: 1000,
    quotaResetCustomSeconds: 0,
    startTime: 1_795_392_000 + 3_600, // Monday 2026-11-23 01:00 UTC
    endTime: 1_796_083_200 + 3_600, // 2026-12-01 01:00 UTC
  };

  it('is the whole term when the allowance never resets', () => {
    expect(allowancePeriod({ ...terms, quotaResetPeriod: 'never' }, NOV_28_2359, 'UTC')).toEqual({
      start: terms.startTime,
      end: terms.endTime,
    });
  });

  it('is the calendar day in the configured zone, cut to the term', () => {
    expect(allowancePeriod({ ...terms, quotaResetPeriod: 'daily' }, NOV_28_2359, 'UTC')).toEqual({
      start: 1_795_824_000,
      end: 1_795_910_400,
    });
    // In Shanghai 23:59 UTC is already 29 November: its day runs from 28 Nov 16:00 UTC.
    expect(allowancePeriod({ ...terms, quotaResetPeriod: 'daily' }, NOV_28_2359, 'Asia/Shanghai')).toEqual({
      start: 1_795_881_600,
      end: 1_795_968_000,
    });
    // The first week starts with the term, not at Monday's midnight.
    expect(allowancePeriod({ ...terms, quotaResetPeriod: 'weekly' }, NOV_28_2359, 'UTC')).toEqual({
      start: terms.startTime,
      end: 1_795_996_800,
    });
    // The month ends with the term.
    expect(allowancePeriod({ ...terms, quotaResetPeriod: 'monthly' }, 1_796_083_200 + 60, 'UTC')).toEqual({
      start: 1_796_083_200,
      end: terms.endTime,
    });
  });

  it('counts custom periods from the start', () => {
    const custom = { ...terms, quotaResetPeriod: 'custom' as const, quotaResetCustomSeconds: 3_600 };
    expect(allowancePeriod(custom, terms.startTime + 7_199, 'UTC')).toEqual({
      start: terms.startTime + 3_600,
      end: terms.startTime + 7_200,
    });
  });
});

describe('allowance keys and limits', () => {
  it('keeps an allowance under its own key beside the windows, and reads 0 as no limit', () => {
    expect(allowanceKey({ id: 12, quotaResetPeriod: 'daily' })).toBe('p:12|quota:day');
    expect(allowanceKey({ id: 12, quotaResetPeriod: 'never' })).toBe('p:12|quota:term');
    expect(allowanceLimit({ amountTotal: 500 })).toBe(500);
    expect(allowanceLimit({ amountTotal: 0 })).toBe(UNLIMITED_ALLOWANCE);
    expect(isRunning({ startTime: 10, endTime: 20 }, 10)).toBe(true);
    expect(isRunning({ startTime: 10, endTime: 20 }, 20)).toBe(false);
  });
});
