import { describe, expect, it } from 'vitest';
import { formatQuota, formatTokens, groupRatioColor } from './format.ts';

describe('display rules', () => {
  it('shows quota as currency: quota / 500000 with two decimals', () => {
    expect(formatQuota(500000)).toBe('$1.00');
    expect(formatQuota(123456)).toBe('$0.25');
    expect(formatQuota(1000, { quotaPerUnit: 1000 })).toBe('$1.00');
  });

  it('shows raw quota units when currency display is off', () => {
    expect(formatQuota(1234567, { inCurrency: false })).toBe('1,234,567');
  });

  it('abbreviates token counts from 1e4 in K, 1e6 in M, 1e9 in B', () => {
    expect(formatTokens(9999)).toBe('9999');
    expect(formatTokens(12_345)).toBe('12.35K');
    expect(formatTokens(2_000_000)).toBe('2M');
    expect(formatTokens(3_500_000_000)).toBe('3.5B');
  });

  it('colours group ratio tags: >5 red, >3 orange, >1 blue, else green', () => {
    expect(groupRatioColor(6)).toBe('red');
    expect(groupRatioColor(5)).toBe('orange');
    expect(groupRatioColor(3)).toBe('blue');
    expect(groupRatioColor(1)).toBe('green');
  });
});
