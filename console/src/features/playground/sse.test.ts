import { describe, expect, it } from 'vitest';
import { createSseParser, errorMessageOf, readChatChunk, readSse, type SseEvent } from './sse.ts';

const encoder = new TextEncoder();

/** A body that hands out the given pieces one read at a time. */
function bodyOf(pieces: Array<string | Uint8Array>): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      for (const piece of pieces)
        controller.enqueue(typeof piece === 'string' ? encoder.encode(piece) : piece);
      controller.close();
    },
  });
}

async function collect(stream: ReadableStream<Uint8Array>): Promise<SseEvent[]> {
  const events: SseEvent[] = [];
  for await (const event of readSse(stream)) events.push(event);
  return events;
}

const chunk = (content: string) => `data: ${JSON.stringify({ choices: [{ delta: { content } }] })}\n\n`;

describe('SSE parser', () => {
  it('joins an event split across reads, even inside a line and between CR and LF', () => {
    const parser = createSseParser();
    expect(parser.push('da')).toEqual([]);
    expect(parser.push('ta: {"a"')).toEqual([]);
    expect(parser.push(':1}\r')).toEqual([]);
    expect(parser.push('\n\r')).toEqual([]);
    expect(parser.push('\n')).toEqual([{ event: 'message', data: '{"a":1}' }]);
  });

  it('ignores comments such as the keep-alive ping and the quota note', () => {
    const parser = createSseParser();
    const events = parser.push(': PING\n\ndata: one\n\n: x-turnpike-quota: 12\n\ndata: [DONE]\n\n');
    expect(events.map((e) => e.data)).toEqual(['one', '[DONE]']);
  });

  it('joins multi-line data with newlines, keeps the event name and strips one leading space', () => {
    const parser = createSseParser();
    expect(parser.push('event: error\ndata:  a\ndata:b\nid: 7\n\n')).toEqual([
      { event: 'error', data: ' a\nb' },
    ]);
  });

  it('delivers a last event that has no closing blank line when the stream ends', () => {
    const parser = createSseParser();
    expect(parser.push('data: [DONE]')).toEqual([]);
    expect(parser.end()).toEqual([{ event: 'message', data: '[DONE]' }]);
  });
});

describe('readSse', () => {
  it('reads events from a byte stream, decoding a character split between reads', async () => {
    const bytes = encoder.encode(chunk('héllo'));
    const split = bytes.indexOf(0xc3) + 1; // between the two bytes of é
    const events = await collect(
      bodyOf([bytes.slice(0, split), bytes.slice(split), ': PING\n\n', 'data: [DONE]\n\n']),
    );
    expect(events.map((e) => readChatChunk(e.data))).toEqual([
      { kind: 'delta', text: 'héllo' },
      { kind: 'done' },
    ]);
  });

  it('cancels the body when the caller stops reading', async () => {
    let cancelled = false;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.enqueue(encoder.encode(chunk('x')));
      },
      cancel() {
        cancelled = true;
      },
    });
    for await (const _ of readSse(stream)) break;
    expect(cancelled).toBe(true);
  });

  it('ends the loop when the signal aborts while waiting for data', async () => {
    const abort = new AbortController();
    const stream = new ReadableStream<Uint8Array>({ start: (c) => c.enqueue(encoder.encode(chunk('a'))) });
    const seen: string[] = [];
    for await (const event of readSse(stream, abort.signal)) {
      seen.push(event.data);
      abort.abort();
    }
    expect(seen).toHaveLength(1);
  });
});

describe('chat chunks', () => {
  it('reads the delta text, the end marker, and skips chunks without text', () => {
    expect(readChatChunk('{"choices":[{"delta":{"content":"Hi"}}]}')).toEqual({ kind: 'delta', text: 'Hi' });
    expect(readChatChunk('[DONE]')).toEqual({ kind: 'done' });
    expect(readChatChunk('{"choices":[{"delta":{"role":"assistant"}}]}')).toEqual({ kind: 'none' });
    expect(readChatChunk('{"choices":[],"usage":{"total_tokens":3}}')).toEqual({ kind: 'none' });
    expect(readChatChunk('not json')).toEqual({ kind: 'none' });
  });

  it('reads an error chunk in the OpenAI shape', () => {
    expect(
      readChatChunk(
        '{"error":{"message":"upstream timed out","type":"api_error","param":null,"code":"timeout"}}',
      ),
    ).toEqual({ kind: 'error', message: 'upstream timed out' });
  });

  it('finds the message of OpenAI errors and of console envelopes', () => {
    expect(errorMessageOf({ error: { message: 'quota exhausted' } })).toBe('quota exhausted');
    expect(errorMessageOf({ error: 'bad' })).toBe('bad');
    expect(errorMessageOf({ success: false, message: 'no' })).toBe('no');
    expect(errorMessageOf({ choices: [] })).toBeNull();
  });
});
