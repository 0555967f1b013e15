import { QUOTA_WINDOW_UNITS } from '@turnpike/core/billing/quota-windows';
import { describe, expect, it } from 'vitest';
import en from '../../locales/en/quota-windows.json' with { type: 'json' };
import zh from '../../locales/zh/quota-windows.json' with { type: 'json' };
import {
  groupWindowsOption,
  parseWindowRows,
  resetText,
  WINDOW_ERROR_KEYS,
  WINDOW_PERIODS,
  type WindowRow,
  windowRowsOf,
  windowsChanged,
} from './rules.ts';

const dollars = { quotaPerUnit: 500_000, inCurrency: true };
const row = (overrides: Partial<WindowRow>): WindowRow => ({
  unit: 'quota',
  period: 'day',
  hours: '',
  limit: '5',
  ...overrides,
});

describe('quota window rules', () => {
  it('turns dollars into quota at the site quota per dollar, and requests into a count', () => {
    expect(
      parseWindowRows(
        [
          row({ limit: '5' }),
          row({ period: 'month', limit: '0.01' }),
          row({ unit: 'requests', period: 'rolling', hours: '5', limit: '200' }),
        ],
        dollars,
      ),
    ).toEqual({
      ok: true,
      windows: [
        { unit: 'quota', limit: 2_500_000, period: 'day' },
        { unit: 'quota', limit: 5_000, period: 'month' },
        { unit: 'requests', limit: 200, period: 'rolling', hours: 5 },
      ],
    });
    expect(
      parseWindowRows([row({ limit: '2500000' })], { quotaPerUnit: 500_000, inCurrency: false }),
    ).toEqual({
      ok: true,
      windows: [{ unit: 'quota', limit: 2_500_000, period: 'day' }],
    });
  });

  it('names the first wrong row and field', () => {
    const wrong = (rows: WindowRow[]) => parseWindowRows(rows, dollars);
    expect(wrong([row({ limit: '' })])).toEqual({
      ok: false,
      index: 0,
      field: 'limit',
      error: 'limitPositive',
    });
    expect(wrong([row({}), row({ limit: '-1' })])).toMatchObject({ index: 1, error: 'limitPositive' });
    // less than one quota unit
    expect(wrong([row({ limit: '0.0000009' })])).toMatchObject({ error: 'limitPositive' });
    expect(wrong([row({ unit: 'requests', limit: '2.5' })])).toMatchObject({ error: 'limitWhole' });
    for (const hours of ['', '0', '745', '1.5'])
      expect(wrong([row({ period: 'rolling', hours })])).toMatchObject({
        field: 'hours',
        error: 'hoursRange',
      });
    expect(wrong([row({}), row({ limit: '9' })])).toMatchObject({ index: 1, error: 'duplicate' });
    // the same unit over different rolling spans is two windows
    expect(wrong([row({ period: 'rolling', hours: '5' }), row({ period: 'rolling', hours: '24' })]).ok).toBe(
      true,
    );
  });

  it('sends an untouched limit back exactly, even one the dollar text cannot hold', () => {
    // At 3,000,000 units per dollar, 1,000,001 units is $0.3333336…, shown as 0.333334, which is 1,000,002 units.
    const display = { quotaPerUnit: 3_000_000, inCurrency: true };
    const rows = windowRowsOf([{ unit: 'quota', limit: 1_000_001, period: 'week' }], display);
    expect(rows[0]?.limit).toBe('0.333334');
    expect(parseWindowRows(rows, display)).toEqual({
      ok: true,
      windows: [{ unit: 'quota', limit: 1_000_001, period: 'week' }],
    });
    const typed = rows.map((r) => ({ ...r, limit: '0.333334' }));
    expect(parseWindowRows(typed, display)).toMatchObject({ windows: [{ limit: 1_000_001 }] });
    expect(parseWindowRows([{ ...typed[0], limit: '1' } as WindowRow], display)).toMatchObject({
      windows: [{ limit: 3_000_000 }],
    });
  });

  it('leaves out a group without windows and names the group of a wrong one', () => {
    expect(
      groupWindowsOption(
        [
          ['default', []],
          ['vip', [row({})]],
        ],
        dollars,
      ),
    ).toEqual({ ok: true, text: '{"vip":[{"unit":"quota","limit":2500000,"period":"day"}]}' });
    expect(groupWindowsOption([['vip', [row({ limit: '0' })]]], dollars)).toMatchObject({
      ok: false,
      group: 'vip',
      index: 0,
      error: 'limitPositive',
    });
  });

  it('sees no change in windows the database answered with its own key order', () => {
    const stored = JSON.parse('[{"unit":"quota","hours":5,"limit":2500000,"period":"rolling"}]');
    expect(windowsChanged(stored, [{ unit: 'quota', limit: 2_500_000, period: 'rolling', hours: 5 }])).toBe(
      false,
    );
    expect(windowsChanged(stored, [{ unit: 'quota', limit: 2_500_001, period: 'rolling', hours: 5 }])).toBe(
      true,
    );
    expect(windowsChanged(undefined, [])).toBe(false);
    expect(windowsChanged(stored, [])).toBe(true);
  });

  it('says a reset within a day by its time, a later one with its date', () => {
    const now = new Date(2026, 2, 10, 23, 30).getTime();
    expect(resetText(new Date(2026, 2, 11, 0, 0).getTime() / 1000, now)).toBe('00:00');
    expect(resetText(new Date(2026, 3, 1, 0, 0).getTime() / 1000, now)).toBe('2026-04-01 00:00');
  });
});

describe('quota window texts', () => {
  it('has every text built from a unit, a period or an error in both languages, and the same keys in each', () => {
    const keys = [
      ...QUOTA_WINDOW_UNITS.flatMap((unit) => WINDOW_PERIODS.map((period) => `spent.${unit}.${period}`)),
      ...QUOTA_WINDOW_UNITS.map((unit) => `unit.${unit}`),
      ...WINDOW_PERIODS.map((period) => `period.${period}`),
      ...Object.values(WINDOW_ERROR_KEYS),
    ];
    const tables: Record<string, Record<string, string>> = { en, zh };
    const absent = Object.entries(tables).flatMap(([lng, table]) =>
      keys.filter((key) => table[key] === undefined).map((key) => `${lng}: ${key}`),
    );
    expect(absent).toEqual([]);
    expect(Object.keys(zh).sort()).toEqual(Object.keys(en).sort());
  });
});
