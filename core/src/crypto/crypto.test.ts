import { describe, expect, it } from 'vitest';
import { hashPassword, verifyPassword } from './password.ts';
import { ALPHANUMERIC, randomString } from './random.ts';
import { createSealedBox } from './sealed-box.ts';

describe('passwords', () => {
  it('verifies the right password and rejects a wrong one', async () => {
    const stored = await hashPassword('correct horse');
    expect(stored).toMatch(/^scrypt\$32768\$8\$1\$/);
    expect(await verifyPassword('correct horse', stored)).toBe(true);
    expect(await verifyPassword('correct horsE', stored)).toBe(false);
  });

  it('salts every hash and fails closed on a malformed one', async () => {
    expect(await hashPassword('same')).not.toBe(await hashPassword('same'));
    expect(await verifyPassword('x', 'not-a-hash')).toBe(false);
    expect(await verifyPassword('x', '$2a$10$bcrypthashfromanothersystem')).toBe(false);
  });
});

describe('randomString', () => {
  it('draws only from the alphabet and has the asked length', () => {
    const value = randomString(48);
    expect(value).toHaveLength(48);
    expect([...value].every((c) => ALPHANUMERIC.includes(c))).toBe(true);
    expect(randomString(48)).not.toBe(value);
  });
});

describe('sealed box', () => {
  it('opens what it sealed and nothing sealed under another secret or purpose', () => {
    const box = createSealedBox('secret-one-0123456789', 'sessions');
    const sealed = box.seal('{"uid":1}');
    expect(sealed).not.toContain('uid');
    expect(box.open(sealed)).toBe('{"uid":1}');
    expect(createSealedBox('secret-two-0123456789', 'sessions').open(sealed)).toBeUndefined();
    expect(createSealedBox('secret-one-0123456789', 'channel keys').open(sealed)).toBeUndefined();
  });

  it('refuses tampered text', () => {
    const box = createSealedBox('secret-one-0123456789', 'sessions');
    const sealed = box.seal('{"uid":1}');
    const flipped = `${sealed.slice(0, 20)}${sealed[20] === 'A' ? 'B' : 'A'}${sealed.slice(21)}`;
    expect(box.open(flipped)).toBeUndefined();
    expect(box.open('short')).toBeUndefined();
  });
});
