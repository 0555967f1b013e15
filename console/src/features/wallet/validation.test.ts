import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkAmount, checkCode, creditedQuota, minimumTopUp, parseAmount } from './validation.ts';

const currency = { min_topup: 5, display_in_currency: true, quota_per_unit: 500_000 };
const quota = { ...currency, display_in_currency: false };

describe('wallet rules', () => {
  it('counts the minimum in units, or in quota when quota is not shown as money', () => {
    expect(minimumTopUp(currency)).toBe(5);
    expect(minimumTopUp(quota)).toBe(2_500_000);
    // a missing or zero minimum still means at least 1
    expect(minimumTopUp({ ...currency, min_topup: 0 })).toBe(1);
  });

  it('raises an amount below 1 to 1 and drops a fraction', () => {
    for (const text of ['0', '-3', '', 'abc', ' 0.5']) expect(parseAmount(text)).toBe(1);
    expect(parseAmount('12.9')).toBe(12);
    expect(parseAmount(' 40 ')).toBe(40);
  });

  it('refuses an amount below the minimum and an empty code', () => {
    expect(checkAmount(4, 5)).toBe('error.belowMinimum');
    expect(checkAmount(5, 5)).toBeNull();
    expect(checkCode('  ')).toBe('error.codeRequired');
    expect(checkCode('abc')).toBeNull();
  });

  it('credits whole units: the quota a payment adds', () => {
    expect(creditedQuota(10, currency)).toBe(5_000_000);
    expect(creditedQuota(1_250_000, quota)).toBe(1_000_000);
  });

  it('has every message key the rules answer in both languages', () => {
    const keys = [checkAmount(0, 1), checkCode('')];
    for (const lng of ['en', 'zh']) {
      const table = JSON.parse(
        readFileSync(path.resolve(import.meta.dirname, `../../locales/${lng}/wallet.json`), 'utf8'),
      ) as Record<string, string>;
      for (const key of keys) expect(table[key ?? '']).toBeTruthy();
    }
  });
});
