import { describe, expect, it } from 'vitest';
import { channelKeysOf, mapChannel } from './channels.ts';
import { logMapping, tokenKeyOf, tokenMapping, userMapping } from './mapping.ts';
import { toBool, toTime } from './values.ts';

describe('reading the three drivers alike', () => {
  it('reads soft-delete times as GORM writes them on SQLite, MySQL and Postgres', () => {
    const at = '2025-01-02T03:04:05.123Z';
    expect(toTime('2025-01-02 03:04:05.123456789+00:00')?.toISOString()).toBe(at);
    expect(toTime('2025-01-02 11:04:05.123+08:00')?.toISOString()).toBe(at);
    expect(toTime('2025-01-02 03:04:05.123')?.toISOString()).toBe(at);
    expect(toTime(new Date(at))?.toISOString()).toBe(at);
    expect(toTime(null)).toBeNull();
    expect(toTime('not a time')).toBeNull();
  });

  it('reads booleans from 0/1, "1", true and buffers', () => {
    expect([1, '1', true, 't', Buffer.from([1])].map(toBool)).toEqual([true, true, true, true, true]);
    expect([0, '0', false, null, undefined, Buffer.from([0])].map(toBool)).toEqual([
      false,
      false,
      false,
      false,
      false,
      false,
    ]);
  });
});

describe('users and tokens', () => {
  it('keeps the bcrypt hash and turns blank unique values into none', () => {
    const mapped = userMapping.map({
      id: '7',
      username: 'ann',
      password: '$2a$10$abc',
      access_token: '',
      aff_code: '',
    });
    expect(mapped).toMatchObject({
      row: { id: 7, password: '$2a$10$abc', accessToken: null, affCode: null, group: 'default' },
    });
    expect(userMapping.map({ id: 8, username: ' ' })).toEqual({ skip: 'no username' });
  });

  it('stores token keys without sk- and refuses what the relay could never match', () => {
    expect(tokenKeyOf('sk-abc123')).toBe('abc123');
    expect(tokenKeyOf('abc123')).toBe('abc123');
    expect(tokenKeyOf('has-dash')).toBeUndefined();
    expect(tokenKeyOf('x'.repeat(49))).toBeUndefined();
  });

  it("turns one-api's allowed models and subnets into model limits and an IP list", () => {
    const mapped = tokenMapping.map({
      id: 1,
      user_id: 2,
      key: 'k',
      models: 'a,b',
      subnet: '10.0.0.0/8, 127.0.0.1',
    });
    expect(mapped).toMatchObject({
      row: {
        modelLimitsEnabled: true,
        modelLimits: 'a,b',
        allowIps: '10.0.0.0/8\n127.0.0.1',
        expiredTime: -1,
      },
    });
  });

  it("keeps new-api's refund logs as system logs", () => {
    expect(logMapping.map({ id: 1, type: 6 })).toMatchObject({ row: { type: 4 } });
    expect(logMapping.map({ id: 2, type: 2 })).toMatchObject({ row: { type: 2 } });
  });

  it("reads one-api's elapsed milliseconds as seconds of use", () => {
    expect(logMapping.map({ id: 1, elapsed_time: 2500, request_id: '' })).toMatchObject({
      row: { useTime: 3, requestId: null },
    });
  });
});

describe('channels', () => {
  it('splits a multi-key channel by lines or by its JSON array, and keeps a single key whole', () => {
    expect(channelKeysOf('a\n\nb\r\nc\n', true)).toEqual(['a', 'b', 'c']);
    expect(channelKeysOf('[{"type":"service_account"},{"type":"x"}]', true)).toEqual([
      '{"type":"service_account"}',
      '{"type":"x"}',
    ]);
    expect(channelKeysOf('{"a":\n1}', false)).toEqual(['{"a":\n1}']);
  });

  it('renumbers one-api types and fills the address one-api used by default', () => {
    const mapped = mapChannel({ id: 3, type: 36, key: 'k', base_url: '' }, { isOneApi: true });
    expect(mapped).toMatchObject({ channels: [{ row: { type: 43 } }] });
    const groq = mapChannel({ id: 4, type: 29, key: 'k' }, { isOneApi: true });
    expect(groq).toMatchObject({ channels: [{ row: { type: 1, baseUrl: 'https://api.groq.com/openai' } }] });
    expect(mapChannel({ id: 5, type: 999, key: 'k' }, { isOneApi: false })).toEqual({
      skip: 'type 999 is not a channel type Turnpike knows',
    });
  });

  it("keeps new-api's video channel types (Kling 50, Jimeng 51, Vidu 52, Doubao video 54, Sora 55) as they are, while one-api's 50 is its OpenAI-compatible type", () => {
    for (const [type, key] of [
      [50, 'ak|sk'],
      [51, 'AKLT|c2s='],
      [52, 'vda_1'],
      [54, 'ark-key'],
      [55, 'sk-sora'],
    ] as const)
      expect(mapChannel({ id: type, type, key }, { isOneApi: false }), String(type)).toMatchObject({
        channels: [{ row: { type, key } }],
      });
    // Submodel (53) has no Turnpike type: skipped with the reason, never imported as something else.
    expect(mapChannel({ id: 53, type: 53, key: 'k' }, { isOneApi: false })).toEqual({
      skip: 'type 53 is not a channel type Turnpike knows',
    });
    expect(
      mapChannel({ id: 7, type: 50, key: 'k', base_url: 'https://compat.example' }, { isOneApi: true }),
    ).toMatchObject({
      channels: [{ row: { type: 1, baseUrl: 'https://compat.example' } }],
    });
  });

  it('keeps a multi-key channel as one channel with each key status, reason, time and the selection mode', () => {
    const mapped = mapChannel(
      {
        id: 9,
        type: 1,
        key: 'k1\nk2\nk3',
        name: 'pool',
        status: 1,
        used_quota: 40,
        channel_info: {
          is_multi_key: true,
          multi_key_size: 3,
          multi_key_status_list: { '1': 2, '2': 3 },
          multi_key_disabled_reason: { '2': 'quota exceeded' },
          multi_key_disabled_time: { '2': 1_700_000_000 },
          multi_key_mode: 'polling',
        },
      },
      { isOneApi: false },
    );
    if (!('channels' in mapped)) throw new Error(mapped.skip);
    expect(mapped.channels).toHaveLength(1);
    const [pool] = mapped.channels;
    expect(pool!.row).toMatchObject({ name: 'pool', status: 1, usedQuota: 40, key: 'k1\nk2\nk3' });
    expect(JSON.parse(pool!.row.channelInfo!)).toEqual({
      is_multi_key: true,
      multi_key_size: 3,
      multi_key_status_list: { 1: 2, 2: 3 },
      multi_key_disabled_reason: { 2: 'quota exceeded' },
      multi_key_disabled_time: { 2: 1_700_000_000 },
      multi_key_polling_index: 0,
      multi_key_mode: 'polling',
    });
  });

  it('switches off an enabled multi-key channel whose keys are all disabled', () => {
    const mapped = mapChannel(
      {
        id: 10,
        type: 1,
        key: 'k1\nk2',
        status: 1,
        channel_info: { is_multi_key: true, multi_key_status_list: { 0: 3, 1: 3 } },
      },
      { isOneApi: false },
    );
    if (!('channels' in mapped)) throw new Error(mapped.skip);
    expect(mapped.channels[0]!.row.status).toBe(3);
    expect(JSON.parse(mapped.channels[0]!.row.otherInfo!).status_reason).toBe(
      'every key of this channel is disabled',
    );
  });
});
