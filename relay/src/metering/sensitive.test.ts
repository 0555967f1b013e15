import { describe, expect, it } from 'vitest';
import { createWordMatcher } from './sensitive.ts';

/** Obvious but slow reference: every occurrence of every word, by indexOf. */
function naiveFind(words: readonly string[], text: string): string[] {
  const lower = text.toLowerCase();
  const out: string[] = [];
  for (const word of new Set(words)) {
    const needle = word.toLowerCase();
    for (let at = lower.indexOf(needle); at !== -1; at = lower.indexOf(needle, at + 1))
      out.push(`${at}:${word}`);
  }
  return out.sort();
}

/** Small deterministic PRNG so the big test is the same on every run. */
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

describe('createWordMatcher', () => {
  it('finds overlapping words and words inside other words', () => {
    const matcher = createWordMatcher(['he', 'she', 'his', 'hers']);
    const found = matcher.findAll('ushers').map((m) => `${m.start}-${m.end}:${m.word}`);
    expect(found).toEqual(['1-4:she', '2-4:he', '2-6:hers']);
  });

  it('ignores case and reports offsets in the original text', () => {
    const matcher = createWordMatcher(['permission denied']);
    const text = 'Error: Permission Denied for key';
    const [match] = matcher.findAll(text);
    expect(match).toBeDefined();
    expect(text.slice(match?.start, match?.end)).toBe('Permission Denied');
    expect(matcher.hasMatch('permission granted')).toBe(false);
  });

  it('is case-sensitive when asked', () => {
    const matcher = createWordMatcher(['Secret'], { caseInsensitive: false });
    expect(matcher.hasMatch('secret')).toBe(false);
    expect(matcher.hasMatch('Secret')).toBe(true);
  });

  it('matches Chinese words and emoji', () => {
    const matcher = createWordMatcher(['敏感词', '😀x']);
    expect(matcher.findWords('这是一个敏感词，还有😀x')).toEqual(['敏感词', '😀x']);
  });

  it('replaces occurrences, merging overlapping ones', () => {
    const matcher = createWordMatcher(['abc', 'bcd', 'xyz']);
    expect(matcher.replaceAll('1abcd2xyz3', '**###**')).toBe('1**###**2**###**3');
    expect(matcher.replaceAll('nothing here', '*')).toBe('nothing here');
  });

  it('finds words split across streamed pieces without keeping the text', () => {
    const matcher = createWordMatcher(['forbidden topic']);
    const scanner = matcher.createScanner();
    expect(scanner.push('this is a forb')).toEqual([]);
    expect(scanner.push('idden to')).toEqual([]);
    expect(scanner.push('pic, right')).toEqual([{ word: 'forbidden topic', start: 10, end: 25 }]);
  });

  it('has no words for an empty list', () => {
    expect(createWordMatcher([]).hasMatch('anything')).toBe(false);
  });

  it('agrees with a naive search and stays fast with 5000 words on 100 KB of text', () => {
    const random = prng(42);
    const alphabet = 'abcdefghijklmnopqrstuvwxyz';
    const word = (min: number, max: number) => {
      const length = min + Math.floor(random() * (max - min + 1));
      let out = '';
      for (let i = 0; i < length; i += 1) out += alphabet[Math.floor(random() * 4 + random() * 22)];
      return out;
    };
    const words = Array.from({ length: 5000 }, () => word(3, 8));
    let text = '';
    while (text.length < 100_000) {
      text +=
        random() < 0.05
          ? `${(words[Math.floor(random() * words.length)] as string).toUpperCase()} `
          : `${word(2, 9)} `;
    }

    const buildStart = performance.now();
    const matcher = createWordMatcher(words);
    const buildMs = performance.now() - buildStart;
    const searchStart = performance.now();
    const found = matcher.findAll(text);
    const searchMs = performance.now() - searchStart;
    console.log(
      `Aho–Corasick: ${matcher.size} words built in ${buildMs.toFixed(1)} ms; ` +
        `${text.length} chars searched in ${searchMs.toFixed(1)} ms, ${found.length} matches`,
    );

    expect(found.length).toBeGreaterThan(1000);
    expect(found.map((m) => `${m.start}:${m.word}`).sort()).toEqual(naiveFind(words, text));
    expect(searchMs).toBeLessThan(1000);
  });
});
