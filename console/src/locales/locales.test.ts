import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = import.meta.dirname;
const isSingular = (key: string) => key.endsWith('_one');
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
    // English alone may add a singular form `key_one`; Chinese has no plural forms, so i18next reads `key` there
    const shared = Object.keys(en).filter((key) => !isSingular(key));
    expect(shared.sort()).toEqual(Object.keys(zh).sort());
    for (const [key, text] of [...Object.entries(en), ...Object.entries(zh)]) expect(text, key).not.toBe('');
  });

  it.each(namespaces)('%s: every singular form has its plural text and a {{count}} use', (file) => {
    const en = read('en', file);
    const orphans = Object.keys(en).filter((key) => isSingular(key) && !en[key.slice(0, -'_one'.length)]);
    expect(orphans).toEqual([]);
    expect(Object.keys(read('zh', file)).filter(isSingular)).toEqual([]);
    const plurals = Object.keys(en).flatMap((key) => (isSingular(key) ? [key.slice(0, -'_one'.length)] : []));
    for (const key of plurals) expect(en[key], key).toContain('{{count}}');
  });
});
