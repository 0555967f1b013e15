import { describe, expect, it } from 'vitest';
import { createSessionCodec, readSessionCookie } from './session-codec.ts';

describe('session codec', () => {
  it('reads back what it sealed, and nothing sealed with another secret', () => {
    const codec = createSessionCodec('a-session-secret-of-some-length');
    const cookie = codec.encode({ uid: 7, turnstile: true });
    expect(codec.decode(cookie)).toMatchObject({ uid: 7, turnstile: true });
    expect(createSessionCodec('another-secret-of-some-length').decode(cookie)).toEqual({});
    expect(codec.decode(`${cookie.slice(0, -2)}xx`)).toEqual({});
  });

  it('finds the session cookie in a Cookie header', () => {
    expect(readSessionCookie('theme=dark; session=abc%2Bdef; other=1')).toBe('abc+def');
    expect(readSessionCookie('session="quoted"')).toBe('quoted');
    expect(readSessionCookie('sessionx=1; xsession=2')).toBeUndefined();
    expect(readSessionCookie(undefined)).toBeUndefined();
  });
});
