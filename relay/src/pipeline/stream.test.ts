import { describe, expect, it } from 'vitest';
import type { StreamEncoder } from '../contract.ts';
import { createTokenCounter } from '../metering/tokens.ts';
import type { SseWriter } from '../sse.ts';
import { NO_REDACTION } from '../upstream/redact.ts';
import { createChatReader, plainChunk, plainOutput, type UnreadBudget } from './stream-chat.ts';
import { StreamState } from './stream-state.ts';

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

describe('the chat reader keeps plain chunks unread within a budget', () => {
  /** A stream whose head is out, its frames gathered as text. */
  const openStream = (budget: UnreadBudget) => {
    let sent = '';
    const writer: SseWriter = {
      isOpen: true,
      open() {},
      write(frame) {
        sent += frame;
      },
      flush: async () => {},
      end() {},
      stop() {},
    };
    const state = new StreamState({
      model: 'gpt-4o',
      check: undefined,
      writer,
      encoder: {} as StreamEncoder,
      redactor: NO_REDACTION,
      startedAt: performance.now(),
      onFirstOutput() {},
    });
    const reader = createChatReader(state, { stream_options: { include_usage: true } }, budget);
    const send = (data: string) => reader.read({ event: undefined, data, id: undefined, retry: undefined });
    return { state, reader, send, sent: () => sent };
  };
  const content = (text: string) =>
    `{"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"${text}"},"finish_reason":null}],"usage":null}`;
  const usage =
    '{"id":"c1","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":7,"total_tokens":10}}';

  it('reads what a stream kept once the streams together keep more than the budget, and gives it back', () => {
    const size = content(' first0').length;
    const budget: UnreadBudget = { kept: 0, limit: 6.5 * size };
    const first = openStream(budget);
    const second = openStream(budget);
    for (let i = 0; i < 5; i += 1) first.send(content(` first${i}`));
    expect(budget.kept).toBe(5 * size);
    // Kept unread: nothing counted yet.
    expect(first.state.counter.total()).toBe(0);
    second.send(content(' second0'));
    expect(second.state.counter.total()).toBe(0);
    // Past the budget: the second stream reads what it kept (two chunks), the first keeps its own.
    second.send(content(' second1'));
    expect(second.state.counter.total()).toBe(4);
    expect(first.state.counter.total()).toBe(0);
    expect(budget.kept).toBe(5 * size);
    // The upstream's usage is the bill: the first stream's kept text is let go without being read.
    first.send(usage);
    expect(first.state.counter.total()).toBe(0);
    expect(budget.kept).toBe(0);
    // Every chunk went on to its client as it came.
    expect(first.sent()).toContain(' first4');
    expect(second.sent()).toContain(' second1');
  });

  it('counts what a stream kept when it ends without usage, and gives the budget back', () => {
    const budget: UnreadBudget = { kept: 0, limit: 1000 };
    const stream = openStream(budget);
    stream.send(content(' hello'));
    stream.send(content(' world'));
    expect(stream.state.counter.total()).toBe(0);
    stream.reader.countUnread?.();
    expect(stream.state.counter.total()).toBe(2);
    expect(budget.kept).toBe(0);
  });

  it('gives the budget back for chunks passed on after the usage chunk', () => {
    const budget: UnreadBudget = { kept: 0, limit: 1000 };
    const stream = openStream(budget);
    stream.send(usage);
    stream.send(content(' late'));
    expect(budget.kept).toBeGreaterThan(0);
    stream.reader.countUnread?.();
    expect(budget.kept).toBe(0);
    expect(stream.state.counter.total()).toBe(0);
  });
});

describe('plainOutput', () => {
  /** The text `StreamState` counts for a chunk when it parses it (every choice through `outputChoice`). */
  const parsedOutput = (data: string): string => {
    const state = new StreamState({
      model: 'gpt-4o',
      check: undefined,
      writer: { isOpen: true } as SseWriter,
      encoder: {} as StreamEncoder,
      redactor: NO_REDACTION,
      startedAt: 0,
      onFirstOutput() {},
    });
    let text = '';
    state.output = (piece: string) => {
      text += piece;
    };
    const chunk = JSON.parse(data) as { choices?: unknown[] };
    for (const choice of chunk.choices ?? []) state.outputChoice(choice as Record<string, unknown>);
    return text;
  };
  const head = '"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o"';

  it('reads the content of the common chunk, escapes and all, as a copy', () => {
    const chunks = [
      `{${head},"choices":[{"index":0,"delta":{"content":" hello"},"logprobs":null,"finish_reason":null}]}`,
      `{${head},"choices":[{"index":0,"delta":{"content":"a \\"quoted\\" \\\\ line\\n\\u4f60"},"finish_reason":null}],"usage":null}`,
      `{${head},"choices":[{"index":0,"delta":{"content":"${'long text '.repeat(20)}"},"finish_reason":null}]}`,
      `{${head},"choices":[{"index":0,"delta":{"content":"ends in a backslash \\\\"},"finish_reason":null}]}`,
    ];
    for (const chunk of chunks) {
      expect(plainOutput(chunk)).toBe(parsedOutput(chunk));
      expect(plainOutput(chunk)).not.toBe(undefined);
    }
  });

  it('reads a chunk without output keys as no output', () => {
    const finish = `{${head},"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`;
    expect(plainOutput(finish)).toBe('');
    expect(parsedOutput(finish)).toBe('');
  });

  it('leaves every other shape to be parsed', () => {
    const others = [
      // The role chunk: the delta holds more than the content.
      `{${head},"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`,
      // Two choices, reasoning, tool calls, legacy completions, a key before the delta.
      `{${head},"choices":[{"index":0,"delta":{"content":"a"}},{"index":1,"delta":{"content":"b"}}]}`,
      `{${head},"choices":[{"index":0,"delta":{"content":"a"},"x":{"reasoning_content":"b"}}]}`,
      `{${head},"choices":[{"index":0,"delta":{"tool_calls":[{"function":{"name":"f","arguments":"{}"}}]}}]}`,
      `{"object":"text_completion","choices":[{"index":0,"text":"a","finish_reason":null}]}`,
      `{${head},"choices":[{"index":0,"logprobs":{"content":[]},"delta":{"content":"a"}}]}`,
      // A delta that is not a choice's member, an escaped key, content that is not text.
      `{${head},"x":{"delta":{"content":"a"}},"choices":[]}`,
      `{"x":{"choices":[{"index":0,"delta":{"content":"a"}}]},"choices":[]}`,
      `not json "choices":[{"index":0,"delta":{"content":"a"}}]}`,
      `{${head},"choices":[{"index":0,"delta":{"\\u0063ontent":"a"}}]}`,
      `{${head},"choices":[{"index":0,"delta":{"content":null}}]}`,
      // A key given twice counts the second time.
      `{${head},"choices":[{"index":0,"delta":{"content":"a"},"delta":null}]}`,
      `{${head},"choices":[{"index":0,"delta":{"content":"a"}}],"choices":null}`,
    ];
    for (const chunk of others) expect(plainOutput(chunk), chunk).toBeUndefined();
  });

  it('counts kept texts as the parsed chunks would be counted', () => {
    const budget: UnreadBudget = { kept: 0, limit: 1_000_000 };
    const state = new StreamState({
      model: 'gpt-4o',
      check: undefined,
      writer: { isOpen: true, open() {}, write() {} } as unknown as SseWriter,
      encoder: {} as StreamEncoder,
      redactor: NO_REDACTION,
      startedAt: 0,
      onFirstOutput() {},
    });
    const reader = createChatReader(state, {}, budget);
    const words = Array.from({ length: 150 }, (_, i) => ` word${i}`);
    const send = (data: string) => reader.read({ event: undefined, data, id: undefined, retry: undefined });
    send(`{${head},"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`);
    for (const word of words)
      send(`{${head},"choices":[{"index":0,"delta":{"content":"${word}"},"finish_reason":null}]}`);
    send(`{${head},"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`);
    expect(state.counter.total()).toBe(0);
    reader.countUnread?.();
    const whole = createTokenCounter('gpt-4o');
    whole.push(words.join(''));
    expect(state.counter.total()).toBe(whole.total());
    expect(whole.total()).toBeGreaterThan(150);
    expect(budget.kept).toBe(0);
  });
});
