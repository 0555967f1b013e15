import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  REDEMPTION_COUNT_MAX as CORE_COUNT_MAX,
  REDEMPTION_NAME_MAX as CORE_NAME_MAX,
} from '@turnpike/core/contracts/redemptions';
import { describe, expect, it } from 'vitest';
import {
  canEdit,
  codesFile,
  copyText,
  parseRedemptionForm,
  REDEMPTION_COUNT_MAX,
  REDEMPTION_NAME_MAX,
  type RedemptionForm,
  RedemptionStatus,
  redemptionStatusName,
  toggleTarget,
} from './validation.ts';

const form = (overrides: Partial<RedemptionForm> = {}): RedemptionForm => ({
  name: 'promo',
  quota: '100000',
  count: '1',
  ...overrides,
});

describe('redemption rules', () => {
  it('keeps the same limits as the server', () => {
    expect(REDEMPTION_NAME_MAX).toBe(CORE_NAME_MAX);
    expect(REDEMPTION_COUNT_MAX).toBe(CORE_COUNT_MAX);
  });

  it('names a new code after its formatted quota when the name is blank', () => {
    expect(parseRedemptionForm(form({ name: '  ' }), false)).toEqual({
      ok: true,
      value: { name: '$0.20', quota: 100000, count: 1 },
    });
    expect(
      parseRedemptionForm(form({ name: '', quota: '1500000' }), false, { inCurrency: false }),
    ).toMatchObject({
      ok: true,
      value: { name: '1,500,000' },
    });
    // an edit keeps a name: blank is refused
    expect(parseRedemptionForm(form({ name: '' }), true)).toMatchObject({
      ok: false,
      field: 'name',
      error: 'error.nameRequired',
    });
  });

  it('refuses a name longer than 20 characters', () => {
    expect(parseRedemptionForm(form({ name: 'x'.repeat(20) }), false).ok).toBe(true);
    expect(parseRedemptionForm(form({ name: 'x'.repeat(21) }), false)).toMatchObject({
      ok: false,
      field: 'name',
      error: 'error.nameTooLong',
    });
    expect(parseRedemptionForm(form({ name: 'x'.repeat(21) }), true)).toMatchObject({
      error: 'error.nameTooLong',
    });
  });

  it('parses the quota as an integer greater than 0', () => {
    for (const quota of ['', 'lots', '0', '-5', ' -1'])
      expect(parseRedemptionForm(form({ quota }), false)).toMatchObject({
        ok: false,
        field: 'quota',
        error: 'error.quotaPositive',
      });
    expect(parseRedemptionForm(form({ quota: '1234.9' }), false)).toMatchObject({
      ok: true,
      value: { quota: 1234 },
    });
  });

  it('takes a count from 1 to 100 on create and ignores it on edit', () => {
    for (const count of ['0', '101', '1.5', 'x', '', '-3'])
      expect(parseRedemptionForm(form({ count }), false)).toMatchObject({
        ok: false,
        field: 'count',
        error: 'error.countRange',
      });
    expect(parseRedemptionForm(form({ count: '100' }), false)).toMatchObject({
      ok: true,
      value: { count: 100 },
    });
    expect(parseRedemptionForm(form({ count: 'x' }), true)).toMatchObject({ ok: true, value: { count: 1 } });
  });

  it('lets only unused codes be edited, and never switches a used one', () => {
    expect(redemptionStatusName(1)).toBe('unused');
    expect(redemptionStatusName(2)).toBe('disabled');
    expect(redemptionStatusName(3)).toBe('used');
    expect(redemptionStatusName(9)).toBe('unknown');
    expect(canEdit(RedemptionStatus.Unused)).toBe(true);
    expect(canEdit(RedemptionStatus.Disabled)).toBe(false);
    expect(canEdit(RedemptionStatus.Used)).toBe(false);
    expect(toggleTarget(RedemptionStatus.Unused)).toBe(RedemptionStatus.Disabled);
    expect(toggleTarget(RedemptionStatus.Disabled)).toBe(RedemptionStatus.Unused);
    expect(toggleTarget(RedemptionStatus.Used)).toBeNull();
  });

  it('writes one code per line to a file named after the codes', () => {
    expect(codesFile('spring promo', ['a1', 'b2'])).toEqual({
      filename: 'spring promo.txt',
      text: 'a1\nb2\n',
    });
    expect(codesFile('a/b:c', ['k']).filename).toBe('a_b_c.txt');
    expect(codesFile('  ', ['k']).filename).toBe('redemption-codes.txt');
    expect(
      copyText([
        { name: 'n', key: 'k1' },
        { name: 'm', key: 'k2' },
      ]),
    ).toBe('n    k1\nm    k2');
  });

  it('has a text in both languages for every status and every error the rules answer', () => {
    const errors = [
      parseRedemptionForm(form({ name: '' }), true),
      parseRedemptionForm(form({ name: 'x'.repeat(21) }), false),
      parseRedemptionForm(form({ quota: '0' }), false),
      parseRedemptionForm(form({ count: '0' }), false),
    ].flatMap((r) => (r.ok ? [] : [r.error]));
    expect(errors).toHaveLength(4);
    const keys = [...errors, ...[1, 2, 3, 0].map((s) => `status.${redemptionStatusName(s)}`)];
    for (const lng of ['en', 'zh']) {
      const table = JSON.parse(
        readFileSync(path.resolve(import.meta.dirname, `../../locales/${lng}/redemptions.json`), 'utf8'),
      ) as Record<string, string>;
      expect(keys.filter((k) => !table[k])).toEqual([]);
    }
  });
});
