import { describe, expect, it } from 'vitest';
import {
  appendKeys,
  deleteKeys,
  infoOfRing,
  joinKeys,
  KeyStatus,
  maskKey,
  newRing,
  parseChannelInfo,
  replaceKeys,
  ringOf,
  setKeyStates,
  splitKeyInput,
} from './multi-key.ts';

const VERTEX = 41;
const doc = (email: string) =>
  JSON.stringify({ type: 'service_account', client_email: email, private_key: 'PRIVATE' });

describe('multi-key rings', () => {
  it('keeps each key state by position through channel_info and back', () => {
    const ring = setKeyStates(newRing(['sk-a', 'sk-b', 'sk-c'], 'polling'), [1], {
      status: KeyStatus.AutoDisabled,
      reason: 'upstream answered 401 Unauthorized',
      time: 1_700_000_000,
    });
    const info = parseChannelInfo(JSON.stringify(infoOfRing(ring)));
    expect(info).toMatchObject({
      is_multi_key: true,
      multi_key_size: 3,
      multi_key_status_list: { 1: 3 },
      multi_key_disabled_reason: { 1: 'upstream answered 401 Unauthorized' },
      multi_key_disabled_time: { 1: 1_700_000_000 },
      multi_key_mode: 'polling',
    });
    const back = ringOf(1, joinKeys(1, ring.keys, true), info);
    expect(back.keys).toEqual(['sk-a', 'sk-b', 'sk-c']);
    expect(back.states.map((s) => s.status)).toEqual([1, 3, 1]);
  });

  it('appends only new keys and replaces keeping the state of the keys that stay', () => {
    const base = setKeyStates(newRing(['sk-a', 'sk-b'], 'random'), [1], {
      status: KeyStatus.AutoDisabled,
      reason: 'quota',
    });
    const appended = appendKeys(base, ['sk-b', 'sk-c']);
    expect(appended.keys).toEqual(['sk-a', 'sk-b', 'sk-c']);
    expect(appended.states.map((s) => s.status)).toEqual([1, 3, 1]);
    const replaced = replaceKeys(appended, ['sk-c', 'sk-b', 'sk-d']);
    expect(replaced.keys).toEqual(['sk-c', 'sk-b', 'sk-d']);
    expect(replaced.states.map((s) => s.status)).toEqual([1, 3, 1]);
    expect(replaced.states[1]?.reason).toBe('quota');
  });

  it('deletes disabled keys and moves the others positions with their state', () => {
    const ring = setKeyStates(newRing(['k1', 'k2', 'k3'], 'random'), [0], { status: KeyStatus.Disabled });
    const kept = deleteKeys(ring, (state) => state.status !== KeyStatus.Enabled);
    expect(kept.keys).toEqual(['k2', 'k3']);
    expect(infoOfRing(kept).multi_key_status_list).toEqual({});
  });

  it('reads a JSON array of service-account documents as one key each, and stores them as an array', () => {
    const keys = splitKeyInput(
      VERTEX,
      JSON.stringify([JSON.parse(doc('a@p.iam')), JSON.parse(doc('b@p.iam'))]),
    );
    expect(keys).toHaveLength(2);
    expect(splitKeyInput(VERTEX, doc('a@p.iam'))).toHaveLength(1);
    const stored = joinKeys(VERTEX, keys, true);
    expect(JSON.parse(stored)).toHaveLength(2);
    expect(ringOf(VERTEX, stored, parseChannelInfo('{"is_multi_key":true}')).keys).toEqual(keys);
  });

  it('reads an unreadable or absent channel_info as a single-key channel', () => {
    expect(parseChannelInfo('not json').is_multi_key).toBe(false);
    expect(ringOf(1, 'sk-one\nsk-two', parseChannelInfo(null)).keys).toEqual(['sk-one\nsk-two']);
  });

  it('masks keys so no key can be read back', () => {
    const key = 'sk-proj-abcdefghijklmnopqrstuvwxyz0123456789';
    const masked = maskKey(key);
    expect(masked).not.toContain(key.slice(5, -4));
    expect(masked.length).toBeLessThan(16);
    expect(maskKey(doc('svc@p.iam'))).toBe('service account svc@p.iam');
    expect(maskKey(doc('svc@p.iam'))).not.toContain('PRIVATE');
    expect(maskKey('short-key')).toBe('sh…');
  });
});
