import { describe, expect, it } from 'vitest';
import { createWordMatcher } from '../metering/sensitive.ts';
import { type CompletionCheck, createStreamFilter, SENSITIVE_REPLACEMENT } from './sensitive-words.ts';

const checkOf = (words: string[], stop: boolean): CompletionCheck => ({
  words: { matcher: createWordMatcher(words), longest: Math.max(...words.map((w) => w.length)) },
  stop,
});

/** Feeds the pieces for choice 0 and returns everything the filter let out, and the words it found. */
function run(words: string[], pieces: string[], stop = false) {
  const filter = createStreamFilter(checkOf(words, stop));
  let out = '';
  const found: string[] = [];
  for (const piece of pieces) {
    const step = filter.push(0, piece);
    out += step.text;
    found.push(...step.found);
  }
  const rest = filter.flush(0);
  return { out: out + rest.text, found: [...found, ...rest.found], pending: filter.pending() };
}

describe('stream filter for sensitive words', () => {
  it('masks a word split across pieces, in any case', () => {
    const result = run(['secret plan'], ['Here is the Sec', 'ret pl', 'an for today.']);
    expect(result.out).toBe(`Here is the ${SENSITIVE_REPLACEMENT} for today.`);
    expect(result.found).toEqual(['secret plan']);
    expect(result.pending).toEqual([]);
  });

  it('lets clean text through unchanged, holding back no more than the longest word less one', () => {
    const filter = createStreamFilter(checkOf(['abcdef'], false));
    const first = filter.push(0, 'hello world, this is clean');
    expect(first.text).toBe('hello world, this is ');
    expect(filter.push(0, ' text').text).toBe('clean');
    expect(filter.flush(0).text).toBe(' text');
  });

  it('sends nothing of a piece shorter than the carry until more arrives', () => {
    const filter = createStreamFilter(checkOf(['forbidden'], false));
    expect(filter.push(0, 'forb').text).toBe('');
    expect(filter.push(0, 'idden fruit and more').text).toBe(`${SENSITIVE_REPLACEMENT} fruit `);
  });

  it('reports the word in stop mode and keeps choices apart', () => {
    const filter = createStreamFilter(checkOf(['bad word'], true));
    expect(filter.push(0, 'a bad').found).toEqual([]);
    expect(filter.push(1, ' word').found).toEqual([]);
    expect(filter.push(0, ' word!').found).toEqual(['bad word']);
  });

  it('masks several words and repeated ones', () => {
    const result = run(['foo', 'barbaz'], ['foo and bar', 'baz and foo or foo']);
    expect(result.out).toBe(
      `${SENSITIVE_REPLACEMENT} and ${SENSITIVE_REPLACEMENT} and ${SENSITIVE_REPLACEMENT} or ${SENSITIVE_REPLACEMENT}`,
    );
  });
});
