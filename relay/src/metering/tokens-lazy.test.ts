import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { countChatPromptTokens, countTextTokens } from './tokens.ts';

/** The encodings' modules this process has loaded (CommonJS, through the module cache). */
const loadedEncodings = () =>
  Object.keys(createRequire(import.meta.url).cache)
    .map((file) => /gpt-tokenizer\/cjs\/encoding\/(\w+)\.js$/.exec(file)?.[1])
    .filter(Boolean);

describe('the token tables', () => {
  it('are loaded on the first count that needs them, each encoding on its own', () => {
    // An idle relay holds neither table (ADR 0036).
    expect(loadedEncodings()).toEqual([]);
    expect(countChatPromptTokens('gpt-4o-mini', [{ role: 'user', content: 'Say hello.' }])).toBeGreaterThan(
      6,
    );
    expect(loadedEncodings()).toEqual(['o200k_base']);
    expect(countTextTokens('hello world', 'cl100k_base')).toBe(2);
    expect(loadedEncodings().sort()).toEqual(['cl100k_base', 'o200k_base']);
  });
});
