import { describe, expect, it } from 'vitest';
import { plainChunk } from './stream-chat.ts';

describe('plainChunk', () => {
  const content = '{"id":"c1","choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}';

  it('passes a chunk that names no usage as it is', () => {
    expect(plainChunk(content, false)).toBe(content);
    expect(plainChunk(content, true)).toBe(content);
  });

  it('passes `usage: null` as it is when the client asked for usage', () => {
    const withNull = '{"id":"c1","choices":[],"usage":null}';
    const spaced = '{"id":"c1","choices":[], "usage" : null }';
    expect(plainChunk(withNull, true)).toBe(withNull);
    expect(plainChunk(spaced, true)).toBe(spaced);
  });

  it('cuts `usage: null` out, wherever it stands, when the client did not ask for usage', () => {
    const cases: [string, unknown][] = [
      ['{"id":"c1","choices":[],"usage":null}', { id: 'c1', choices: [] }],
      ['{"id":"c1","choices":[], "usage" : null }', { id: 'c1', choices: [] }],
      ['{"usage":null,"id":"c1"}', { id: 'c1' }],
      ['{ "usage":\tnull ,\n"id":"c1"}', { id: 'c1' }],
      ['{"usage":null}', {}],
      ['{"id":"c1","x":{"a":1, "usage":null}}', { id: 'c1', x: { a: 1 } }],
    ];
    for (const [chunk, expected] of cases) {
      const passed = plainChunk(chunk, false);
      expect(passed, chunk).toBeDefined();
      expect(JSON.parse(passed!), chunk).toEqual(expected);
      expect(passed).not.toContain('usage');
    }
  });

  it('reads a chunk that reports usage', () => {
    const usage = '{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":5,"total_tokens":8}}';
    expect(plainChunk(usage, true)).toBeUndefined();
    expect(plainChunk(usage, false)).toBeUndefined();
  });

  it('reads a chunk where "usage" is text rather than a key, appears twice, or stands oddly', () => {
    expect(plainChunk('{"choices":[{"delta":{"content":"usage"}}]}', true)).toBeUndefined();
    expect(plainChunk('{"usage":null,"x":{"usage":{"prompt_tokens":1}}}', true)).toBeUndefined();
    expect(plainChunk('{"usage":nullish}', false)).toBeUndefined();
    expect(plainChunk('["usage":null]', false)).toBeUndefined();
    expect(plainChunk(`{"usage"${' '.repeat(40)}:null}`, false)).toBeUndefined();
    // An escaped quote inside text never looks like the key.
    const quoted = '{"choices":[{"delta":{"content":"say \\"usage\\": null"}}]}';
    expect(plainChunk(quoted, true)).toBe(quoted);
    expect(plainChunk(quoted, false)).toBe(quoted);
  });
});
