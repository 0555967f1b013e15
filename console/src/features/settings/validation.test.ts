import { describe, expect, it } from 'vitest';
import { changedEntries, fieldError, initialDraft, type OptionField } from './option-fields.ts';
import { applyBatch, optionsFromRows, rowsFromOptions } from './pricing.ts';
import {
  stripTrailingSlash,
  validateBatchSet,
  validateLogClearTime,
  validatePriceRow,
  validateWellKnown,
  validateWhitelistDomain,
} from './validation.ts';

describe('settings validation', () => {
  it('accepts only http(s) well-known addresses for OIDC', () => {
    expect(validateWellKnown('')).toBe('oidc.wellKnownRequired');
    expect(validateWellKnown('ftp://idp/.well-known/openid-configuration')).toBe('oidc.wellKnownScheme');
    expect(validateWellKnown('https://idp.example.com/.well-known/openid-configuration')).toBeNull();
    expect(validateWellKnown('http://localhost:8080/x')).toBeNull();
  });

  it('checks whitelist domains and refuses duplicates', () => {
    expect(validateWhitelistDomain('gmail', [])).toBe('whitelist.invalid');
    expect(validateWhitelistDomain('not a domain.com', [])).toBe('whitelist.invalid');
    expect(validateWhitelistDomain('Gmail.com', ['gmail.com'])).toBe('whitelist.duplicate');
    expect(validateWhitelistDomain('qq.com', ['gmail.com'])).toBeNull();
  });

  it('strips trailing slashes from addresses', () => {
    expect(stripTrailingSlash('https://a.example.com//')).toBe('https://a.example.com');
  });

  it('needs a chosen time to clear logs', () => {
    expect(validateLogClearTime('')).toBe('logs.timeRequired');
    expect(validateLogClearTime('2026-01-01T00:00')).toBeNull();
  });

  it('rejects a zero price, non-numbers and duplicate model names', () => {
    const row = { name: 'gpt-4o', price: '', ratio: '1.25', completionRatio: '4' };
    expect(validatePriceRow({ ...row, price: '0' }, [], null)).toBe('pricing.priceZero');
    expect(validatePriceRow({ ...row, price: 'abc' }, [], null)).toBe('pricing.notNumber');
    expect(validatePriceRow({ ...row, ratio: 'x' }, [], null)).toBe('pricing.notNumber');
    expect(validatePriceRow(row, ['gpt-4o'], null)).toBe('pricing.duplicate');
    expect(validatePriceRow(row, ['gpt-4o'], 'gpt-4o')).toBeNull();
    // with a fixed price the (disabled) ratio fields are ignored
    expect(validatePriceRow({ ...row, price: '0.02', ratio: 'junk' }, [], null)).toBeNull();
  });

  it('checks the batch-set dialog', () => {
    expect(validateBatchSet(0, 'ratio', '1', '')).toBe('pricing.batchNoSelection');
    expect(validateBatchSet(2, 'both', '1', '')).toBe('pricing.batchBothRequired');
    expect(validateBatchSet(2, 'ratio', '', '')).toBe('pricing.batchValueRequired');
    expect(validateBatchSet(2, 'ratio', 'x', '')).toBe('pricing.batchInvalid');
    expect(validateBatchSet(2, 'both', '1', '2')).toBeNull();
  });

  it('a fixed price clears the ratios on save; per-token rows clear the price', () => {
    const rows = rowsFromOptions({
      ModelPrice: '{"mj": 0.1}',
      ModelRatio: '{"gpt-4o": 1.25, "mj": 3}',
      CompletionRatio: '{"gpt-4o": 4}',
    });
    const out = optionsFromRows(applyBatch(rows, new Set(['gpt-4o']), 'price', 0.5, 0));
    expect(JSON.parse(out.ModelPrice)).toEqual({ mj: 0.1, 'gpt-4o': 0.5 });
    expect(JSON.parse(out.ModelRatio)).toEqual({});
    expect(JSON.parse(out.CompletionRatio)).toEqual({});
  });

  it("rewrites the shape entries of the editor's models only: a deleted row takes its tiers, a fixed price keeps only fees", () => {
    const values = {
      ModelRatio: '{"claude": 1.5, "gone": 1, "gpt-5": 0.625}',
      LongContextTiers:
        '{"claude": [{"above": 200000, "input": 2, "output": 1.5}], "gone": [{"above": 1000, "input": 2, "output": 2}], "gemini-*": [{"above": 200000, "input": 2, "output": 1.5}]}',
      ServiceTierRatio: '{"gpt-5": {"priority": 2}}',
      RequestFees: '{"claude": {"web_search": 0.01}, "unpriced": {"image": 0.04}}',
    };
    const rows = rowsFromOptions(values).filter((row) => row.name !== 'gone');
    // claude goes per call (batch): its tier goes, its fee stays; gpt-5 keeps its service tier through a batch.
    const out = optionsFromRows(
      applyBatch(applyBatch(rows, new Set(['claude']), 'price', 0.5, 0), new Set(['gpt-5']), 'ratio', 1, 0),
      values,
    );
    expect(JSON.parse(out.LongContextTiers)).toEqual({
      'gemini-*': [{ above: 200000, input: 2, output: 1.5 }],
    });
    expect(JSON.parse(out.ServiceTierRatio)).toEqual({ 'gpt-5': { priority: 2 } });
    expect(JSON.parse(out.RequestFees)).toEqual({ unpriced: { image: 0.04 }, claude: { web_search: 0.01 } });
    expect(JSON.parse(out.ModelPrice)).toEqual({ claude: 0.5 });
  });

  it('sends only changed fields, secrets only when typed, addresses without trailing slash', () => {
    const fields: OptionField[] = [
      { key: 'ServerAddress', kind: 'address' },
      { key: 'SMTPToken', kind: 'secret' },
      { key: 'RegisterEnabled', kind: 'switch' },
    ];
    const values = { ServerAddress: 'https://a.com', RegisterEnabled: 'true' };
    expect(
      changedEntries(fields, values, {
        ServerAddress: 'https://a.com/',
        SMTPToken: '',
        RegisterEnabled: 'true',
      }),
    ).toEqual([]);
    expect(
      changedEntries(fields, values, {
        ServerAddress: 'https://b.com/',
        SMTPToken: 's3cret',
        RegisterEnabled: 'false',
      }),
    ).toEqual([
      ['ServerAddress', 'https://b.com'],
      ['SMTPToken', 's3cret'],
      ['RegisterEnabled', 'false'],
    ]);
  });

  it('shows JSON options pretty-printed and does not count a new layout as a change', () => {
    const fields: OptionField[] = [{ key: 'GroupRatio', kind: 'json' }];
    const values = { GroupRatio: '{"default":1,"vip":2}' };
    const draft = initialDraft(fields, values);
    expect(draft.GroupRatio).toBe('{\n  "default": 1,\n  "vip": 2\n}');
    expect(changedEntries(fields, values, draft)).toEqual([]);
    expect(changedEntries(fields, values, { GroupRatio: '{"default": 1, "vip": 3}' })).toEqual([
      ['GroupRatio', '{"default": 1, "vip": 3}'],
    ]);
    // text that is not JSON is shown as stored, and a change to it still counts
    expect(initialDraft(fields, { GroupRatio: '{bad' }).GroupRatio).toBe('{bad');
    expect(changedEntries(fields, { GroupRatio: '{bad' }, { GroupRatio: '{bad}' })).toHaveLength(1);
  });

  it('checks numeric bounds of rate limits and thinking percentages', () => {
    const success: OptionField = {
      key: 'ModelRequestRateLimitSuccessCount',
      kind: 'number',
      min: 1,
      integer: true,
    };
    expect(fieldError(success, '0')).toBe('validation.min');
    expect(fieldError(success, '1.5')).toBe('validation.integer');
    expect(fieldError(success, 'x')).toBe('validation.number');
    const pct: OptionField = { key: 'p', kind: 'number', min: 0.1, max: 1 };
    expect(fieldError(pct, '0.05')).toBe('validation.min');
    expect(fieldError(pct, '1.2')).toBe('validation.max');
    expect(fieldError(pct, '0.6')).toBeNull();
    expect(fieldError({ key: 'j', kind: 'json' }, '{bad')).toBe('validation.json');
  });
});
