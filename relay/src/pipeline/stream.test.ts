import { describe, expect, it } from 'vitest';
import { isPlainChunk } from './stream.ts';

describe('isPlainChunk', () => {
  const content = '{"id":"c1","choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}';

  it('passes a chunk that names no usage', () => {
    expect(isPlainChunk(content, false)).toBe(true);
    expect(isPlainChunk(content, true)).toBe(true);
  });

  it('passes `usage: null` only when the client asked for usage (it gets chunks unchanged)', () => {
    const withNull = '{"id":"c1","choices":[],"usage":null}';
    const spaced = '{"id":"c1","choices":[], "usage" : null }';
    expect(isPlainChunk(withNull, true)).toBe(true);
    expect(isPlainChunk(spaced, true)).toBe(true);
    // Without include_usage the null field is removed, so the chunk must be read.
    expect(isPlainChunk(withNull, false)).toBe(false);
  });

  it('reads a chunk that reports usage', () => {
    const usage = '{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":5,"total_tokens":8}}';
    expect(isPlainChunk(usage, true)).toBe(false);
    expect(isPlainChunk(usage, false)).toBe(false);
  });

  it('reads a chunk where "usage" is text rather than a key, or appears twice', () => {
    expect(isPlainChunk('{"choices":[{"delta":{"content":"usage"}}]}', true)).toBe(false);
    expect(isPlainChunk('{"usage":null,"x":{"usage":{"prompt_tokens":1}}}', true)).toBe(false);
    // An escaped quote inside text never looks like the key.
    expect(isPlainChunk('{"choices":[{"delta":{"content":"say \\"usage\\": 1"}}]}', true)).toBe(true);
  });
});
