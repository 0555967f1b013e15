import { describe, expect, it } from 'vitest';
import { findUnstorableText, isStorableText } from './storable-text.ts';

describe('storable text', () => {
  it('refuses NUL and lone surrogates, and keeps every other character', () => {
    expect(isStorableText('plain, 中文, emoji 😀, tab\t and \u0001')).toBe(true);
    expect(isStorableText('a\u0000b')).toBe(false);
    expect(isStorableText('\ud800')).toBe(false);
    expect(isStorableText('x\udc00y')).toBe(false);
    expect(isStorableText('\udc00\ud800')).toBe(false);
    expect(isStorableText('\ud83d\ude00')).toBe(true);
  });

  it('names the first field that holds refused text, keys included', () => {
    expect(findUnstorableText({ username: 'a\u0000b', password: 'x' })).toBe('username');
    expect(findUnstorableText({ items: [{ tag: 'ok' }, { tag: '\ud800' }] })).toBe('items.1.tag');
    expect(findUnstorableText({ 'k\u0000': 1 })).toBe('k\\u0000');
    expect(findUnstorableText('\u0000', 'body')).toBe('body');
    expect(findUnstorableText({ a: 1, b: [true, null, 'fine'] })).toBeUndefined();
  });

  it('walks a deeply nested value without overflowing the stack', () => {
    let deep: unknown = '\u0000';
    for (let i = 0; i < 200_000; i++) deep = [deep];
    expect(findUnstorableText(deep)).toMatch(/^0(\.0)+$/);
  });
});
