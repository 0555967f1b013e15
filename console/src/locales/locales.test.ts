import { describe, expect, it } from 'vitest';
import en from './en/common.json';
import zh from './zh/common.json';

describe('translations', () => {
  it('English has every key Chinese has, and no empty texts', () => {
    expect(Object.keys(en).sort()).toEqual(Object.keys(zh).sort());
    for (const [key, text] of [...Object.entries(en), ...Object.entries(zh)]) expect(text, key).not.toBe('');
  });
});
