import { describe, expect, it } from 'vitest';
import enSettings from './en/settings.json';
import enUsers from './en/users.json';
import zhSettings from './zh/settings.json';
import zhUsers from './zh/users.json';

describe('settings and users translations', () => {
  it.each([
    ['settings', enSettings, zhSettings],
    ['users', enUsers, zhUsers],
  ])('%s: English and Chinese have the same keys and no empty texts', (_ns, en, zh) => {
    expect(Object.keys(en).sort()).toEqual(Object.keys(zh).sort());
    for (const [key, text] of [...Object.entries(en), ...Object.entries(zh)]) expect(text, key).not.toBe('');
  });
});
