import { countTokens as countCl100k } from 'gpt-tokenizer/encoding/cl100k_base';
import { countTokens as countO200k } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import {
  countChatPromptTokens,
  countInputTokens,
  countLongTexts,
  countTextTokens,
  createTokenCounter,
  encodingForModel,
  LONG_TEXT,
} from './tokens.ts';

const english =
  'The quick brown fox jumps over the lazy dog. It said: "don\'t stop!" and ran 1234567 metres,\n' +
  'then wrote code: const x = a.b?.c ?? 42; // done\n\n  Indented  twice   spaced words, émigré café, ' +
  '数字 123 and emoji 😀👍 end.\r\nNext line/with slashes.';

/** Splits text into pieces of pseudo-random sizes (1–40 characters), like network chunks. */
function split(text: string, seed: number): string[] {
  const pieces: string[] = [];
  let state = seed;
  for (let at = 0; at < text.length; ) {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    const size = 1 + (state % 40);
    pieces.push(text.slice(at, at + size));
    at += size;
  }
  return pieces;
}

describe('encodingForModel', () => {
  it('uses o200k for gpt-4o, 4.1, 5 and o-series and cl100k otherwise', () => {
    for (const model of [
      'gpt-4o',
      'gpt-4o-mini',
      'chatgpt-4o-latest',
      'gpt-4.1-nano',
      'gpt-5',
      'o1',
      'o3-mini',
      'o4-mini',
    ]) {
      expect(encodingForModel(model)).toBe('o200k_base');
    }
    for (const model of [
      'gpt-4',
      'gpt-3.5-turbo',
      'claude-3-5-sonnet',
      'deepseek-chat',
      'text-embedding-3-small',
    ]) {
      expect(encodingForModel(model)).toBe('cl100k_base');
    }
  });

  it('counts differently with the two encodings', () => {
    expect(countTextTokens('hello world', 'o200k_base')).toBe(2);
    const chinese = '这是一个用于比较两种编码的中文句子';
    expect(countTextTokens(chinese, 'o200k_base')).toBeLessThan(countTextTokens(chinese, 'cl100k_base'));
  });

  it('counts special-token text as plain text instead of throwing', () => {
    expect(countTextTokens('<|endoftext|>', 'cl100k_base')).toBeGreaterThan(1);
  });

  it('gives a short text the same count whether it is counted or kept, past the number kept', () => {
    // 5,000 distinct short texts (more than are kept), each read twice: the second read is the kept count.
    const texts = Array.from(
      { length: 5000 },
      (_, i) => `${english.slice(i % 90, (i % 90) + 1 + (i % 60))} ${i}`,
    );
    for (const text of texts) {
      for (let read = 0; read < 2; read++) {
        expect(countTextTokens(text, 'o200k_base')).toBe(countO200k(text));
        expect(countTextTokens(text, 'cl100k_base')).toBe(countCl100k(text));
      }
    }
    // The same text is kept per encoding: its count in one is never read as its count in the other.
    const chinese = '这是一个用于比较两种编码的中文句子';
    expect(countTextTokens(chinese, 'cl100k_base')).toBe(countCl100k(chinese));
    expect(countTextTokens(chinese, 'o200k_base')).toBe(countO200k(chinese));
    expect(countO200k(chinese)).not.toBe(countCl100k(chinese));
  });
});

describe('createTokenCounter', () => {
  const long = english.repeat(250);

  it.each(['gpt-4o', 'gpt-4'])('counts a stream split anywhere exactly like the whole text (%s)', (model) => {
    const whole = countTextTokens(long, encodingForModel(model));
    for (const seed of [1, 2, 3]) {
      const counter = createTokenCounter(model);
      for (const piece of split(long, seed)) counter.push(piece);
      expect(counter.total()).toBe(whole);
    }
  });

  it('keeps memory bounded on a long stream', () => {
    const counter = createTokenCounter('gpt-4o');
    let maxPending = 0;
    for (const piece of split(long, 7)) {
      counter.push(piece);
      maxPending = Math.max(maxPending, counter.pendingLength);
    }
    expect(long.length).toBeGreaterThan(50_000);
    expect(maxPending).toBeLessThan(1000);
  });

  it('stays within 0.1% on text with no spaces, with bounded memory', () => {
    const cjk = '天地玄黄宇宙洪荒日月盈昃辰宿列张寒来暑往秋收冬藏'.repeat(500);
    const whole = countTextTokens(cjk, 'o200k_base');
    const counter = createTokenCounter('gpt-4o');
    let maxPending = 0;
    for (const piece of split(cjk, 5)) {
      counter.push(piece);
      maxPending = Math.max(maxPending, counter.pendingLength);
    }
    expect(Math.abs(counter.total() - whole) / whole).toBeLessThan(0.001);
    expect(maxPending).toBeLessThanOrEqual(2048 + 40);
  });
});

describe('prompt counting', () => {
  it('counts chat messages with the per-message overhead', () => {
    const messages = [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: [{ type: 'text', text: 'hello world' }], name: 'ann' },
    ];
    const o200k = (text: string) => countTextTokens(text, 'o200k_base');
    const expected =
      3 +
      (3 + o200k('system') + o200k('You are terse.')) +
      (3 + o200k('user') + o200k('hello world') + 1 + o200k('ann'));
    expect(countChatPromptTokens('gpt-4o', messages)).toBe(expected);
  });

  it('counts every tool, not only the last one', () => {
    const tool = (name: string) => ({
      type: 'function',
      function: { name, description: 'd', parameters: { type: 'object' } },
    });
    const one = countChatPromptTokens('gpt-4o', [], [tool('alpha')]);
    const two = countChatPromptTokens('gpt-4o', [], [tool('alpha'), tool('beta')]);
    expect(two - one).toBeGreaterThan(8);
  });

  it('counts embeddings input as a string, a list of strings or token ids', () => {
    expect(countInputTokens('text-embedding-3-small', 'hello world')).toBe(2);
    expect(countInputTokens('text-embedding-3-small', ['hello', 'world'])).toBe(2);
    expect(countInputTokens('text-embedding-3-small', [[1, 2, 3]])).toBe(3);
  });
});

describe('countLongTexts', () => {
  /** A long prompt of mixed text: words, code, line breaks, CJK, emoji and runs of spaces, unique per call. */
  const longPrompt = (seed: number, size: number) => {
    let text = `seed ${seed}\n`;
    for (let i = 0; text.length < size; i += 1)
      text += `${english} #${i}\n${i % 7 === 0 ? '    x = f(y)\n' : ''}`;
    return text;
  };
  const whole = { o200k_base: countO200k, cl100k_base: countCl100k } as const;
  const asText = { disallowedSpecial: new Set<string>() };

  it('counts a long text in slices to the same total as the whole text at once, in both encodings', async () => {
    for (const [model, encoding] of [
      ['gpt-4o', 'o200k_base'],
      ['gpt-3.5-turbo', 'cl100k_base'],
    ] as const) {
      const text = longPrompt(encoding.length, 200_000);
      const expected = whole[encoding](text, asText);
      await countLongTexts([text, 'short'], model);
      // The count is kept: the synchronous count finds it.
      expect(countTextTokens(text, encoding)).toBe(expected);
    }
  });

  it('lets the event loop through while it counts', async () => {
    const text = longPrompt(1, 400_000);
    expect(text.length).toBeGreaterThan(LONG_TEXT);
    let turns = 0;
    let counting = true;
    const tick = () => {
      if (!counting) return;
      turns += 1;
      setImmediate(tick);
    };
    setImmediate(tick);
    await countLongTexts([text], 'gpt-4o');
    counting = false;
    // 400,000 characters in 8 KiB slices: the loop came round between them, not once at the end.
    expect(turns).toBeGreaterThan(20);
    expect(countTextTokens(text, 'o200k_base')).toBe(countO200k(text, asText));
  });

  it('counts a run with no exact cut (no spaces) in bounded slices, within 0.1% of the whole count', async () => {
    const cjk = '数据中心的模型网关'.repeat(1900);
    const run = 'x'.repeat(LONG_TEXT + 1000);
    await countLongTexts([cjk, run], 'gpt-4o');
    for (const text of [cjk, run]) {
      const expected = countO200k(text, asText);
      expect(Math.abs(countTextTokens(text, 'o200k_base') - expected)).toBeLessThanOrEqual(
        expected / 1000 + 1,
      );
    }
    // The synchronous count of such a text (not kept yet) gives the same figure.
    const other = '模型网关的数据中心'.repeat(1900);
    const counted = countTextTokens(other, 'o200k_base');
    await countLongTexts([other], 'gpt-4o');
    expect(countTextTokens(other, 'o200k_base')).toBe(counted);
    // The whole-text counts above are the slow part (BPE time grows with the square of a run's length).
  }, 30_000);
});
