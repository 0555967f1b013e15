import { describe, expect, it } from 'vitest';
import { ChannelStatus } from '../domain/closed-sets.ts';
import {
  checkChannelJsonField,
  checkChannelOther,
  computeAbilities,
  normalizeBaseUrl,
  splitChannelKeys,
  splitCommaList,
} from './channel-rules.ts';

describe('splitChannelKeys', () => {
  it('makes one key per non-blank line', () => {
    expect(splitChannelKeys(1, 'sk-a\n\n  sk-b  \r\nsk-c\n')).toEqual(['sk-a', 'sk-b', 'sk-c']);
  });
  it('keeps a Vertex AI service-account document whole', () => {
    const doc = '{\n  "type": "service_account",\n  "project_id": "p"\n}';
    expect(splitChannelKeys(41, doc)).toEqual([doc]);
  });
  it('answers nothing for a blank key', () => {
    expect(splitChannelKeys(1, '  \n ')).toEqual([]);
    expect(splitChannelKeys(41, ' ')).toEqual([]);
  });
});

describe('splitCommaList', () => {
  it('trims, drops blanks and duplicates', () => {
    expect(splitCommaList(' a, b,,a ,c ')).toEqual(['a', 'b', 'c']);
  });
});

describe('checkChannelJsonField', () => {
  it('accepts blank text as not set', () => {
    expect(checkChannelJsonField('model_mapping', '')).toBeUndefined();
  });
  it('refuses text that is not JSON', () => {
    expect(checkChannelJsonField('model_mapping', '{nope')).toBe('model_mapping must be valid JSON');
  });
  it('refuses a JSON value that is not an object', () => {
    expect(checkChannelJsonField('setting', '[1]')).toBe('setting must be a JSON object');
    expect(checkChannelJsonField('param_override', '"x"')).toBe('param_override must be a JSON object');
  });
  it('wants model names on both sides of a mapping', () => {
    expect(checkChannelJsonField('model_mapping', '{"gpt-4":"gpt-4o"}')).toBeUndefined();
    expect(checkChannelJsonField('model_mapping', '{"gpt-4":3}')).toMatch(/model names/);
  });
  it('wants status codes on both sides of a status mapping', () => {
    expect(checkChannelJsonField('status_code_mapping', '{"429":"500","400":503}')).toBeUndefined();
    expect(checkChannelJsonField('status_code_mapping', '{"abc":"500"}')).toMatch(/HTTP status codes/);
  });
  it('checks the known setting keys', () => {
    expect(checkChannelJsonField('setting', '{"force_format":true,"proxy":"socks5://h:1"}')).toBeUndefined();
    expect(checkChannelJsonField('setting', '{"force_format":"yes"}')).toMatch(/force_format/);
    expect(checkChannelJsonField('setting', '{"proxy":"ftp://x"}')).toMatch(/proxy/);
  });
  it('checks other_info fields', () => {
    expect(checkChannelJsonField('other_info', '{"status_reason":"x","status_time":1}')).toBeUndefined();
    expect(checkChannelJsonField('other_info', '{"status_time":"now"}')).toMatch(/status_time/);
  });
});

describe('checkChannelOther', () => {
  it('needs a region or a map with default for Vertex AI only', () => {
    expect(checkChannelOther(1, '')).toBeUndefined();
    expect(checkChannelOther(41, '')).toMatch(/region/);
    expect(checkChannelOther(41, 'us-central1')).toBeUndefined();
    expect(checkChannelOther(41, '{"default":"us-east5"}')).toBeUndefined();
    expect(checkChannelOther(41, '{"gemini":"us"}')).toMatch(/default/);
  });
});

describe('computeAbilities', () => {
  const channel = {
    id: 7,
    group: 'default,vip',
    models: 'gpt-4o,gpt-4o-mini,gpt-4o',
    status: ChannelStatus.Enabled,
    priority: 5,
    weight: 2,
    tag: 'team',
  };
  it('makes one row per group and model', () => {
    const rows = computeAbilities(channel);
    expect(rows).toHaveLength(4);
    expect(rows).toContainEqual({
      group: 'vip',
      model: 'gpt-4o-mini',
      channelId: 7,
      enabled: true,
      priority: 5,
      weight: 2,
      tag: 'team',
    });
  });
  it('disables every row of a channel that is not enabled', () => {
    for (const status of [ChannelStatus.ManuallyDisabled, ChannelStatus.AutoDisabled])
      expect(computeAbilities({ ...channel, status }).every((r) => !r.enabled)).toBe(true);
  });
  it('makes no rows without models', () => {
    expect(computeAbilities({ ...channel, models: '' })).toEqual([]);
  });
});

describe('normalizeBaseUrl', () => {
  it('removes trailing slashes', () => {
    expect(normalizeBaseUrl(' https://x.test/api// ')).toBe('https://x.test/api');
  });
});
