import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = import.meta.dirname;
const read = (language: string, file: string): Record<string, string> =>
  JSON.parse(readFileSync(path.join(root, language, file), 'utf8'));

describe('translations', () => {
  const namespaces = readdirSync(path.join(root, 'zh')).filter((f) => f.endsWith('.json'));

  it('has the same namespaces in Chinese and English', () => {
    expect(namespaces).toContain('common.json');
    expect(
      readdirSync(path.join(root, 'en'))
        .filter((f) => f.endsWith('.json'))
        .sort(),
    ).toEqual([...namespaces].sort());
  });

  it.each(namespaces)('%s: English has every key Chinese has, and no empty texts', (file) => {
    const zh = read('zh', file);
    const en = read('en', file);
    expect(Object.keys(en).sort()).toEqual(Object.keys(zh).sort());
    for (const [key, text] of [...Object.entries(en), ...Object.entries(zh)]) expect(text, key).not.toBe('');
  });
});
