/**
 * Golden tests of every way a stream can end (issue 16 item 7) and the billing cases of the provider seam
 * (issue 18): the client leaves before the first token and mid-stream; the upstream drops mid-stream with and
 * without usage; an error event after the 200; a malformed event; a stream with no usage block; cache read and
 * write tokens; thinking tokens. An interrupted answer ends with an error event in the client's protocol and no
 * end marker, is billed for what was produced, and its consume log says how it ended (`other.stream_end`). (The
 * stream time-out is in streaming.int.test.ts.)
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { logs } from '@turnpike/core/db/schema/index';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeOpenAi, startFakeOpenAi } from './testing/fake-openai.ts';
import { type FakeProviders, startFakeProviders } from './testing/fake-providers.ts';
import { createRelayTestApp, type RelayTestApp } from './testing/relay-test-app.ts';
import { waitFor } from './testing/wait.ts';

let t: RelayTestApp;
let fake: FakeOpenAi;
let providers: FakeProviders;
let odd: Server;
let address: string;
let key: string;

const consumeLog = (requestId: string) =>
  waitFor(async () => (await t.runtime.deps.db.select().from(logs).where(eq(logs.requestId, requestId)))[0]);
const otherOf = (log: { other: string | null }) => JSON.parse(log.other ?? '{}') as Record<string, unknown>;

/** Chunks of an OpenAI stream whose third event is not JSON. */
const MALFORMED_STREAM = [
  'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"Hel"},"finish_reason":null}]}\n\n',
  'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"lo"},"finish_reason":null}]}\n\n',
  'data: {"id":"c1", this is not json\n\n',
  'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n',
  'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":9,"completion_tokens":2,"total_tokens":11}}\n\n',
  'data: [DONE]\n\n',
].join('');

beforeAll(async () => {
  fake = await startFakeOpenAi();
  providers = await startFakeProviders();
  odd = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => {
      body += chunk.toString();
    });
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      // `no-done-model`: the same answer, well formed, and the body ends without `[DONE]`.
      res.end(
        body.includes('no-done-model')
          ? MALFORMED_STREAM.replace('data: {"id":"c1", this is not json\n\n', '').replace(
              'data: [DONE]\n\n',
              '',
            )
          : MALFORMED_STREAM,
      );
    });
  });
  await new Promise<void>((resolve) => odd.listen(0, '127.0.0.1', resolve));
  t = await createRelayTestApp();
  await t.runtime.deps.options.set(
    'ModelRatio',
    JSON.stringify({
      'gpt-4o-mini': 1,
      'claude-test': 1,
      'gemini-test': 1,
      'odd-model': 1,
      'no-done-model': 1,
    }),
  );
  await t.runtime.deps.options.set('CacheRatio', JSON.stringify({ 'claude-test': 0.1 }));
  await t.runtime.deps.options.set('CreateCacheRatio', JSON.stringify({ 'claude-test': 2 }));
  await t.seedChannel({ key: 'sk-upstream', baseUrl: fake.url, models: 'gpt-4o-mini' });
  await t.seedChannel({ key: 'sk-ant-api03-fake', baseUrl: providers.url, models: 'claude-test', type: 14 });
  await t.seedChannel({ key: 'AIza-fake-key', baseUrl: providers.url, models: 'gemini-test', type: 24 });
  await t.seedChannel({
    key: 'sk-odd',
    baseUrl: `http://127.0.0.1:${(odd.address() as AddressInfo).port}`,
    models: 'odd-model,no-done-model',
  });
  const relay = await t.startRelay();
  address = await relay.listen({ port: 0, host: '127.0.0.1' });
  const user = await t.seedUser({ quota: 50_000_000 });
  key = (await t.seedToken(user.id)).key;
});

afterAll(async () => {
  await t?.close();
  await Promise.all([fake?.close(), providers?.close(), new Promise((resolve) => odd?.close(resolve))]);
});

/** Posts and reads the whole answer as text. */
async function post(path: string, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  const response = await fetch(`${address}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer sk-${key}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { response, text: await response.text(), id: response.headers.get('x-request-id')! };
}

const chatStream = (model: string, extra: Record<string, unknown> = {}) =>
  post('/v1/chat/completions', {
    model,
    stream: true,
    messages: [{ role: 'user', content: 'hi' }],
    ...extra,
  });

/** `data:` payloads of an SSE text, parsed when JSON. */
const dataOf = (text: string): unknown[] =>
  text
    .split('\n\n')
    .filter((frame) => frame.startsWith('data: ') || frame.includes('\ndata: '))
    .map((frame) => {
      const line = frame
        .split('\n')
        .find((l) => l.startsWith('data: '))!
        .slice(6);
      try {
        return JSON.parse(line);
      } catch {
        return line;
      }
    });

/** Reads a stream until `until` says so, then leaves (the client goes away). */
async function leaveWhen(model: string, until: (textSoFar: string) => boolean) {
  const controller = new AbortController();
  const response = await fetch(`${address}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer sk-${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    signal: controller.signal,
  });
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  while (!until(text)) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  controller.abort();
  return { id: response.headers.get('x-request-id')!, text };
}

describe('how a stream ends', () => {
  it('a client that leaves before the first token is billed its prompt only, logged as gone', async () => {
    fake.setBehaviour({ firstTokenDelayMs: 1500 });
    try {
      const { id } = await leaveWhen('gpt-4o-mini', (text) => text.includes('"role":"assistant"'));
      const log = await consumeLog(id);
      expect(otherOf(log).stream_end).toBe('client_gone');
      expect(log.completionTokens).toBe(0);
      expect(log.promptTokens).toBeGreaterThan(0);
      expect(log.quota).toBe(log.promptTokens);
    } finally {
      fake.setBehaviour({ firstTokenDelayMs: 0 });
    }
  });

  it('a client that leaves mid-stream is billed what was produced until then', async () => {
    fake.setBehaviour({ chunkDelayMs: 200 });
    try {
      const { id } = await leaveWhen('gpt-4o-mini', (text) => text.includes('"content":" is"'));
      const log = await consumeLog(id);
      expect(otherOf(log).stream_end).toBe('client_gone');
      expect(log.completionTokens).toBeGreaterThan(0);
      expect(log.completionTokens).toBeLessThan(8);
    } finally {
      fake.setBehaviour({ chunkDelayMs: 0 });
    }
  });

  it('an upstream that drops mid-stream without usage: error event, no [DONE], counted bill, logged cut off', async () => {
    fake.setBehaviour({ dropAfterChunks: 3 });
    try {
      const { text, id } = await chatStream('gpt-4o-mini');
      const events = dataOf(text);
      expect(events.at(-1)).toMatchObject({ error: { code: 'stream_cut_off', type: 'upstream_error' } });
      expect(text).not.toContain('[DONE]');
      const log = await consumeLog(id);
      expect(otherOf(log)).toMatchObject({ stream_end: 'cut_off', usage_counted: true });
      expect(log.completionTokens).toBeGreaterThan(0);
      expect(log.content).toContain('cut off');
    } finally {
      fake.setBehaviour({ dropAfterChunks: undefined });
    }
  });

  it("an upstream that drops mid-stream after reporting usage (Anthropic's message_start): its input, our output count", async () => {
    providers.setBehaviour({ dropAfter: 2 });
    try {
      const { text, id } = await post(
        '/v1/messages',
        { model: 'claude-test', max_tokens: 50, stream: true, messages: [{ role: 'user', content: 'hi' }] },
        { 'x-api-key': `sk-${key}`, authorization: '' },
      );
      expect(text).toMatch(
        /event: error\ndata: \{"type":"error","error":\{"type":"api_error","message":"the upstream ended the stream before the answer was complete/,
      );
      expect(text).not.toContain('message_stop');
      const log = await consumeLog(id);
      expect(otherOf(log).stream_end).toBe('cut_off');
      expect(otherOf(log).usage_counted).toBeUndefined();
      expect(log.promptTokens).toBeGreaterThan(10);
      expect(log.completionTokens).toBeGreaterThanOrEqual(2);
    } finally {
      providers.setBehaviour({ dropAfter: undefined });
    }
  });

  it('an error event after the 200 reaches each client in its own protocol and the output is billed', async () => {
    providers.setBehaviour({ errorEventAfter: 2, errorMessage: 'Overloaded' });
    try {
      const openai = await chatStream('claude-test');
      expect(dataOf(openai.text).at(-1)).toMatchObject({
        error: { type: 'overloaded_error', message: expect.stringContaining('Overloaded') },
      });
      expect(openai.text).not.toContain('[DONE]');
      const log = await consumeLog(openai.id);
      expect(otherOf(log).stream_end).toBe('upstream_error');
      expect(log.completionTokens).toBeGreaterThanOrEqual(2);

      const anthropic = await post(
        '/v1/messages',
        { model: 'claude-test', max_tokens: 50, stream: true, messages: [{ role: 'user', content: 'hi' }] },
        { 'x-api-key': `sk-${key}`, authorization: '' },
      );
      expect(anthropic.text).toMatch(
        /event: error\ndata: \{"type":"error","error":\{"type":"overloaded_error"/,
      );
      expect(anthropic.text).not.toContain('message_stop');

      const gemini = await post('/v1beta/models/gemini-test:streamGenerateContent?alt=sse', {
        contents: [{ role: 'user', parts: [{ text: 'hi' }] }],
      });
      expect(dataOf(gemini.text).at(-1)).toMatchObject({ error: { status: 'UNAVAILABLE' } });
      expect(otherOf(await consumeLog(gemini.id)).stream_end).toBe('upstream_error');
    } finally {
      providers.setBehaviour({ errorEventAfter: undefined });
    }
  });

  it('a malformed event is passed on as it came and the answer still completes', async () => {
    const { text, id } = await chatStream('odd-model');
    expect(text).toContain('data: {"id":"c1", this is not json\n\n');
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
    const log = await consumeLog(id);
    expect(log.promptTokens).toBe(9);
    expect(log.completionTokens).toBe(2);
    expect(otherOf(log).stream_end).toBeUndefined();
  });

  it('an upstream that sent its finish reason and usage but no [DONE] has still answered whole', async () => {
    const { text, id } = await chatStream('no-done-model');
    expect(text).not.toContain('stream_cut_off');
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
    expect(otherOf(await consumeLog(id)).stream_end).toBeUndefined();
  });

  it('a stream with no usage block is counted and completes normally, in every client protocol', async () => {
    fake.setBehaviour({ omitUsage: true });
    providers.setBehaviour({ omitUsage: true });
    try {
      const openai = await chatStream('gpt-4o-mini', { stream_options: { include_usage: true } });
      expect(openai.text.endsWith('data: [DONE]\n\n')).toBe(true);
      const usageChunk = dataOf(openai.text).find((event) => (event as { usage?: unknown }).usage) as {
        usage: { completion_tokens: number };
      };
      const log = await consumeLog(openai.id);
      expect(otherOf(log).usage_counted).toBe(true);
      expect(usageChunk.usage.completion_tokens).toBe(log.completionTokens);

      const anthropic = await post(
        '/v1/messages',
        { model: 'claude-test', max_tokens: 50, stream: true, messages: [{ role: 'user', content: 'hi' }] },
        { 'x-api-key': `sk-${key}`, authorization: '' },
      );
      expect(anthropic.text).toContain('event: message_stop');
      const anthropicLog = await consumeLog(anthropic.id);
      expect(otherOf(anthropicLog).usage_counted).toBe(true);
      expect(anthropicLog.completionTokens).toBeGreaterThan(0);
    } finally {
      fake.setBehaviour({ omitUsage: false });
      providers.setBehaviour({ omitUsage: false });
    }
  });
});

describe('billing through the seam', () => {
  it('bills Anthropic cache reads at the cache ratio and cache writes at the CreateCacheRatio entry', async () => {
    providers.setBehaviour({ cacheReadTokens: 1000, cacheWriteTokens: 200 });
    try {
      for (const stream of [false, true]) {
        const { id } = await post('/v1/chat/completions', {
          model: 'claude-test',
          stream,
          messages: [{ role: 'user', content: 'hi' }],
        });
        const log = await consumeLog(id);
        const other = otherOf(log);
        expect(other).toMatchObject({ cache_tokens: 1000, cache_creation_tokens: 200 });
        const uncached = log.promptTokens - 1000 - 200;
        expect(uncached).toBeGreaterThan(0);
        expect(other.cache_creation_ratio).toBe(2);
        expect(log.quota).toBe(Math.round(uncached + 1000 * 0.1 + 200 * 2 + log.completionTokens));
      }
    } finally {
      providers.setBehaviour({ cacheReadTokens: 0, cacheWriteTokens: 0 });
    }
  });

  it('bills Gemini thought tokens as output, and shows them as reasoning tokens', async () => {
    const { text, id } = await post('/v1/chat/completions', {
      model: 'gemini-test',
      reasoning_effort: 'low',
      messages: [{ role: 'user', content: 'hi' }],
    });
    const answer = JSON.parse(text);
    const log = await consumeLog(id);
    const thoughts = answer.usage.completion_tokens_details.reasoning_tokens;
    expect(thoughts).toBeGreaterThan(0);
    expect(answer.choices[0].message.reasoning_content).toBeTruthy();
    expect(log.completionTokens).toBe(answer.usage.completion_tokens);
    expect(log.completionTokens).toBeGreaterThan(thoughts);
  });
});

describe('a long stream', () => {
  it('arrives whole past what the relay keeps unread, billed with the upstream usage', async () => {
    // 2,000 chunks of ~230 bytes: past the 256 KiB the chat reader keeps unread, so part of it is read on the way.
    const chunks = 2000;
    const { response, text, id } = await chatStream('gpt-4o-mini', {
      stream_options: { include_usage: true },
      fake_stream: { chunks, interval_ms: 0 },
    });
    expect(response.status).toBe(200);
    const events = dataOf(text);
    expect(events.at(-1)).toBe('[DONE]');
    const contents = events.flatMap((event) => {
      const content = (event as { choices?: { delta?: { content?: unknown } }[] }).choices?.[0]?.delta
        ?.content;
      return typeof content === 'string' && content !== '' ? [content] : [];
    });
    expect(contents).toHaveLength(chunks);
    const words = 'Hello! This is a reply from the fake OpenAI upstream.'.split(' ');
    expect(contents.slice(words.length, words.length + 2)).toEqual([' Hello!', ' This']);
    const usage = (events.at(-2) as { usage: { completion_tokens: number; prompt_tokens: number } }).usage;
    expect(usage.completion_tokens).toBeGreaterThan(chunks);
    const log = await consumeLog(id);
    expect(log.completionTokens).toBe(usage.completion_tokens);
    expect(log.promptTokens).toBe(usage.prompt_tokens);
    expect(otherOf(log).usage_counted).toBeUndefined();
  });

  it('the fake refuses a stream length it does not accept', async () => {
    const response = await fetch(`${fake.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', stream: true, messages: [], fake_stream: { chunks: 0 } }),
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { param: string } }).error.param).toBe('fake_stream');
  });
});
