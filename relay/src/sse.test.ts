import { EventEmitter } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import type { RelayReply } from './contract.ts';
import {
  createSseParser,
  createSseWriter,
  DONE,
  formatSseComment,
  formatSseEvent,
  formatSseJson,
  isDoneEvent,
  SSE_DONE_FRAME,
  type SseEvent,
} from './sse.ts';

// A chat completion stream as api.openai.com sends it (stream_options.include_usage), with non-ASCII content so
// that splits also fall inside multi-byte UTF-8 characters.
const chunks = [
  {
    id: 'chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG',
    object: 'chat.completion.chunk',
    created: 1741570283,
    model: 'gpt-4o-2024-08-06',
    service_tier: 'default',
    system_fingerprint: 'fp_eb9dce56a8',
    choices: [
      {
        index: 0,
        delta: { role: 'assistant', content: '', refusal: null },
        logprobs: null,
        finish_reason: null,
      },
    ],
    usage: null,
  },
  {
    id: 'chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG',
    object: 'chat.completion.chunk',
    created: 1741570283,
    model: 'gpt-4o-2024-08-06',
    service_tier: 'default',
    system_fingerprint: 'fp_eb9dce56a8',
    choices: [{ index: 0, delta: { content: 'Hello 👋, ' }, logprobs: null, finish_reason: null }],
    usage: null,
  },
  {
    id: 'chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG',
    object: 'chat.completion.chunk',
    created: 1741570283,
    model: 'gpt-4o-2024-08-06',
    service_tier: 'default',
    system_fingerprint: 'fp_eb9dce56a8',
    choices: [{ index: 0, delta: { content: '你好！' }, logprobs: null, finish_reason: null }],
    usage: null,
  },
  {
    id: 'chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG',
    object: 'chat.completion.chunk',
    created: 1741570283,
    model: 'gpt-4o-2024-08-06',
    service_tier: 'default',
    system_fingerprint: 'fp_eb9dce56a8',
    choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }],
    usage: null,
  },
  {
    id: 'chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG',
    object: 'chat.completion.chunk',
    created: 1741570283,
    model: 'gpt-4o-2024-08-06',
    service_tier: 'default',
    system_fingerprint: 'fp_eb9dce56a8',
    choices: [],
    usage: {
      prompt_tokens: 19,
      completion_tokens: 10,
      total_tokens: 29,
      prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0 },
    },
  },
];
const expectedData = [...chunks.map((chunk) => JSON.stringify(chunk)), DONE];
const streamText = (eol: string) =>
  `${[...chunks.map((chunk) => `data: ${JSON.stringify(chunk)}`), `data: ${DONE}`].join(eol + eol)}${eol}${eol}`;

const feed = (parts: (Uint8Array | string)[]): SseEvent[] => {
  const parser = createSseParser();
  const events = parts.flatMap((part) => parser.push(part));
  return [...events, ...parser.end()];
};

describe('SSE parser on a real OpenAI stream', () => {
  for (const [label, eol] of [
    ['LF', '\n'],
    ['CRLF', '\r\n'],
    ['CR', '\r'],
  ] as const) {
    const bytes = new TextEncoder().encode(streamText(eol));

    it(`yields every chunk and [DONE] when split at every byte boundary (${label})`, () => {
      for (let cut = 0; cut <= bytes.length; cut += 1) {
        const events = feed([bytes.subarray(0, cut), bytes.subarray(cut)]);
        expect(
          events.map((event) => event.data),
          `cut at ${cut}`,
        ).toEqual(expectedData);
      }
    });

    it(`yields the same events when fed one byte at a time (${label})`, () => {
      const parts = Array.from(bytes, (_byte, index) => bytes.subarray(index, index + 1));
      expect(feed(parts).map((event) => event.data)).toEqual(expectedData);
    });
  }

  it('yields events as soon as their blank line arrives, not at the end', () => {
    const parser = createSseParser();
    expect(parser.push('data: {"a":1}\n')).toEqual([]);
    expect(parser.push('\n')).toEqual([
      { event: undefined, data: '{"a":1}', id: undefined, retry: undefined },
    ]);
  });

  it('waits for the LF of a CRLF split across chunks instead of seeing an extra blank line', () => {
    const parser = createSseParser();
    expect(parser.push('data: a\r')).toEqual([]);
    expect(parser.push('\ndata: b\r\n\r\n').map((event) => event.data)).toEqual(['a\nb']);
  });

  it('recognises [DONE]', () => {
    const [done] = feed(['data: [DONE]\n\n']);
    expect(done && isDoneEvent(done)).toBe(true);
  });
});

describe('SSE parser details of the standard', () => {
  it('joins multi-line data with newlines', () => {
    expect(feed(['data: first\ndata: second\ndata:third\n\n']).map((event) => event.data)).toEqual([
      'first\nsecond\nthird',
    ]);
  });

  it('reports comments (keep-alives) without making events of them', () => {
    const comments: string[] = [];
    const parser = createSseParser({ onComment: (text) => comments.push(text) });
    const events = [...parser.push(': PING\n\n:\n\ndata: x\n\n'), ...parser.end()];
    expect(events.map((event) => event.data)).toEqual(['x']);
    expect(comments).toEqual(['PING', '']);
  });

  it('reads event, id and retry fields (Anthropic-style named events)', () => {
    const events = feed(['event: message_start\nid: 7\nretry: 3000\ndata: {"type":"message_start"}\n\n']);
    expect(events).toEqual([
      { event: 'message_start', data: '{"type":"message_start"}', id: '7', retry: 3000 },
    ]);
  });

  it('ignores an invalid retry, unknown fields and events with no data', () => {
    const events = feed(['retry: soon\nfoo: bar\ndata: x\n\nevent: ping\n\n']);
    expect(events).toEqual([{ event: undefined, data: 'x', id: undefined, retry: undefined }]);
  });

  it('treats a field with no colon as a field with an empty value', () => {
    expect(feed(['data\ndata\n\n']).map((event) => event.data)).toEqual(['\n']);
  });

  it('keeps only one leading space of the value', () => {
    expect(feed(['data:  two spaces\n\n']).map((event) => event.data)).toEqual([' two spaces']);
  });

  it('skips a byte-order mark at the start of the stream', () => {
    expect(feed([new Uint8Array([0xef, 0xbb, 0xbf]), 'data: x\n\n']).map((event) => event.data)).toEqual([
      'x',
    ]);
  });

  it('delivers a last event whose blank line never came when the stream ends', () => {
    expect(feed(['data: {"usage":1}\n\ndata: [DONE]']).map((event) => event.data)).toEqual([
      '{"usage":1}',
      DONE,
    ]);
    expect(feed(['data: [DONE]\n']).map((event) => event.data)).toEqual([DONE]);
  });

  it('refuses a line longer than the limit instead of holding it in memory', () => {
    const parser = createSseParser({ maxEventBytes: 16 });
    expect(() => parser.push(`data: ${'x'.repeat(32)}`)).toThrow(RangeError);
  });

  it('refuses an event whose data lines add up past the limit', () => {
    const parser = createSseParser({ maxEventBytes: 16 });
    expect(() => parser.push('data: 0123456789\ndata: 0123456789\n')).toThrow(RangeError);
  });
});

describe('SSE writer', () => {
  it('writes JSON chunks, [DONE] and comments in OpenAI wire format', () => {
    expect(formatSseJson({ a: 'b\nc' })).toBe('data: {"a":"b\\nc"}\n\n');
    expect(SSE_DONE_FRAME).toBe('data: [DONE]\n\n');
    expect(formatSseComment('PING')).toBe(': PING\n\n');
  });

  it('writes named events and multi-line data that the parser reads back unchanged', () => {
    const data = 'line one\nline two\r\nline three';
    const frame = formatSseEvent(data, { event: 'content_block_delta', id: '42' });
    expect(frame).toBe(
      'event: content_block_delta\nid: 42\ndata: line one\ndata: line two\ndata: line three\n\n',
    );
    expect(feed([frame])).toEqual([
      { event: 'content_block_delta', data: 'line one\nline two\nline three', id: '42', retry: undefined },
    ]);
  });

  it('refuses a line break in a field that would split the frame', () => {
    expect(() => formatSseComment('a\nb')).toThrow(RangeError);
    expect(() => formatSseEvent('x', { event: 'a\nb' })).toThrow(RangeError);
  });
});

/** A response socket as the writer sees it: full after `capacity` characters until drained. */
class FakeResponse extends EventEmitter {
  head: { status: number; headers: Record<string, unknown> } | undefined;
  written: string[] = [];
  buffered = 0;
  destroyed = false;
  writableEnded = false;
  private readonly capacity: number;
  constructor(capacity = Number.POSITIVE_INFINITY) {
    super();
    this.capacity = capacity;
  }
  writeHead(status: number, headers: Record<string, unknown>) {
    this.head = { status, headers };
    return this;
  }
  write(text: string) {
    this.written.push(text);
    this.buffered += text.length;
    return this.buffered < this.capacity;
  }
  end(text?: string) {
    if (text) this.written.push(text);
    this.writableEnded = true;
  }
  drain() {
    this.buffered = 0;
    this.emit('drain');
  }
}

const replyOver = (raw: FakeResponse, headers: Record<string, string> = {}) => {
  let hijacked = false;
  const reply = {
    raw: raw as unknown as RelayReply['raw'],
    get sent() {
      return hijacked;
    },
    hijack() {
      hijacked = true;
      return reply;
    },
    getHeaders: () => headers,
  } as unknown as RelayReply;
  return { reply, hijacked: () => hijacked };
};

describe('SSE writer of a stream', () => {
  it('holds the head and every frame until it is opened, then sends them first, in order', async () => {
    const raw = new FakeResponse();
    const { reply, hijacked } = replyOver(raw, { 'x-request-id': 'r1' });
    const writer = createSseWriter(reply, { pingMs: 0 });
    writer.write(formatSseJson({ role: 'assistant' }));
    await writer.flush();
    expect(raw.head).toBeUndefined();
    expect(raw.written).toEqual([]);
    expect(hijacked()).toBe(false);
    writer.open();
    writer.write(formatSseJson({ content: 'hi' }));
    await writer.flush();
    expect(raw.head).toEqual({
      status: 200,
      headers: {
        'x-request-id': 'r1',
        'content-type': 'text/event-stream',
        'cache-control': 'no-cache',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
      },
    });
    expect(raw.written.join('')).toBe('data: {"role":"assistant"}\n\ndata: {"content":"hi"}\n\n');
    writer.write(SSE_DONE_FRAME);
    writer.end();
    expect(raw.writableEnded).toBe(true);
    expect(raw.written.at(-1)).toBe(SSE_DONE_FRAME);
  });

  it('takes the content type of a stream that is not server-sent events', () => {
    const raw = new FakeResponse();
    const writer = createSseWriter(replyOver(raw).reply, { pingMs: 0, contentType: 'application/json' });
    writer.open();
    expect(raw.head?.headers['content-type']).toBe('application/json');
  });

  it('waits for the socket to drain when it is full', async () => {
    const raw = new FakeResponse(10);
    const writer = createSseWriter(replyOver(raw).reply, { pingMs: 0 });
    writer.open();
    writer.write(formatSseJson({ content: 'a long enough frame' }));
    let flushed = false;
    const flushing = writer.flush().then(() => {
      flushed = true;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(flushed).toBe(false);
    raw.drain();
    await flushing;
    expect(flushed).toBe(true);
  });

  it('sends a ping only after the head is out and nothing was written for the interval', async () => {
    vi.useFakeTimers();
    try {
      const raw = new FakeResponse();
      const writer = createSseWriter(replyOver(raw).reply, { pingMs: 1000 });
      vi.advanceTimersByTime(5000);
      expect(raw.written).toEqual([]);
      writer.open();
      vi.advanceTimersByTime(600);
      writer.write(formatSseJson({ content: 'x' }));
      await writer.flush();
      vi.advanceTimersByTime(600);
      expect(raw.written).not.toContain(': PING\n\n');
      vi.advanceTimersByTime(500);
      expect(raw.written.at(-1)).toBe(': PING\n\n');
      writer.end();
      vi.advanceTimersByTime(5000);
      expect(raw.written.filter((text) => text === ': PING\n\n')).toHaveLength(1);
    } finally {
      vi.useRealTimers();
    }
  });
});
