import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { normaliseOpenAiUsage } from '../metering/usage.ts';
import { createSseParser, isDoneEvent, type SseEvent } from '../sse.ts';
import { DEFAULT_FAKE_BEHAVIOUR, type FakeOpenAi, startFakeOpenAi } from '../testing/fake-openai.ts';
import { createUpstreamClient, UpstreamFailure, type UpstreamResponse } from './client.ts';

let fake: FakeOpenAi;
const client = createUpstreamClient({ connectionsPerOrigin: 4, headersTimeoutMs: 2000, bodyTimeoutMs: 2000 });

beforeAll(async () => {
  fake = await startFakeOpenAi();
});
afterAll(async () => {
  await client.close();
  await fake.close();
});
beforeEach(() => {
  fake.setBehaviour(DEFAULT_FAKE_BEHAVIOUR);
  fake.requests.length = 0;
});

const chat = (body: Record<string, unknown>, signal?: AbortSignal) =>
  client.request({
    url: `${fake.url}/v1/chat/completions`,
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-upstream' },
    body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'Say hello' }], ...body }),
    ...(signal ? { signal } : {}),
  });

async function events(response: UpstreamResponse): Promise<SseEvent[]> {
  const parser = createSseParser();
  const out: SseEvent[] = [];
  for await (const chunk of response.body) out.push(...parser.push(chunk));
  out.push(...parser.end());
  return out;
}

describe('upstream client against the fake OpenAI upstream', () => {
  it('returns a non-stream completion with usage and forwards headers and body', async () => {
    const response = await chat({});
    expect(response.status).toBe(200);
    const body = JSON.parse(await response.readText());
    expect(body.object).toBe('chat.completion');
    expect(body.choices[0].message.content).toBe(DEFAULT_FAKE_BEHAVIOUR.reply);
    expect(normaliseOpenAiUsage(body.usage)?.completionTokens).toBeGreaterThan(5);
    expect(fake.requests[0]?.headers.authorization).toBe('Bearer sk-upstream');
    expect(fake.requests[0]?.body).toMatchObject({ model: 'gpt-4o' });
  });

  it('streams role, content, finish and usage chunks then [DONE]', async () => {
    const response = await chat({ stream: true, stream_options: { include_usage: true } });
    expect(response.headers['content-type']).toContain('text/event-stream');
    const received = await events(response);
    expect(isDoneEvent(received[received.length - 1] as SseEvent)).toBe(true);
    const chunks = received.filter((e) => !isDoneEvent(e)).map((e) => JSON.parse(e.data));
    expect(chunks[0].choices[0].delta.role).toBe('assistant');
    const text = chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('');
    expect(text).toBe(DEFAULT_FAKE_BEHAVIOUR.reply);
    expect(chunks[chunks.length - 2].choices[0].finish_reason).toBe('stop');
    const last = chunks[chunks.length - 1];
    expect(last.choices).toEqual([]);
    expect(last.usage.total_tokens).toBe(last.usage.prompt_tokens + last.usage.completion_tokens);
    expect(chunks.slice(0, -1).every((c) => c.usage === null)).toBe(true);
  });

  it('sends no usage when asked to behave like a provider without usage', async () => {
    fake.setBehaviour({ omitUsage: true });
    const received = await events(await chat({ stream: true, stream_options: { include_usage: true } }));
    expect(received.filter((e) => !isDoneEvent(e)).every((e) => !('usage' in JSON.parse(e.data)))).toBe(true);
    const plain = JSON.parse(await (await chat({})).readText());
    expect(plain.usage).toBeUndefined();
  });

  it.each([401, 429, 500] as const)('returns the status and OpenAI error body of a %i', async (status) => {
    fake.setBehaviour({ error: status });
    const response = await chat({});
    expect(response.status).toBe(status);
    const body = JSON.parse(await response.readText());
    expect(typeof body.error.message).toBe('string');
    expect(body.error).toHaveProperty('type');
  });

  it('fails only the first n requests when errorTimes is set', async () => {
    fake.setBehaviour({ error: 429, errorTimes: 1 });
    expect((await chat({})).status).toBe(429);
    const second = await chat({});
    await second.discard();
    expect(second.status).toBe(200);
  });

  it('serves embeddings and models', async () => {
    const embeddings = await client.request({
      url: `${fake.url}/v1/embeddings`,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'text-embedding-3-small', input: ['a', 'b'] }),
    });
    const body = JSON.parse(await embeddings.readText());
    expect(body.data).toHaveLength(2);
    expect(body.data[0].embedding).toHaveLength(8);
    expect(body.usage.prompt_tokens).toBe(2);
    const models = await client.request({ url: `${fake.url}/v1/models`, method: 'GET' });
    expect(JSON.parse(await models.readText()).data.map((m: { id: string }) => m.id)).toContain('gpt-4o');
  });

  it('reuses keep-alive connections', async () => {
    const before = fake.connectionCount;
    for (let i = 0; i < 10; i += 1) await (await chat({})).readText();
    expect(fake.connectionCount - before).toBeLessThanOrEqual(1);
  });

  it('aborts the upstream request when the caller aborts mid-stream', async () => {
    fake.setBehaviour({ chunkDelayMs: 50 });
    const abortedBefore = fake.abortedCount;
    const controller = new AbortController();
    const response = await chat({ stream: true }, controller.signal);
    const parser = createSseParser();
    let seen = 0;
    await expect(
      (async () => {
        for await (const chunk of response.body) {
          seen += parser.push(chunk).length;
          if (seen >= 2) controller.abort();
        }
      })(),
    ).rejects.toMatchObject({ kind: 'aborted' });
    await expect.poll(() => fake.abortedCount).toBe(abortedBefore + 1);
  });

  it('times out a slow response head and a stalled stream', async () => {
    fake.setBehaviour({ headersDelayMs: 400 });
    await expect(
      client.request({ url: `${fake.url}/v1/models`, method: 'GET', headersTimeoutMs: 100 }),
    ).rejects.toMatchObject({ kind: 'timeout' });

    fake.setBehaviour({ headersDelayMs: 0, firstTokenDelayMs: 600 });
    const response = await client.request({
      url: `${fake.url}/v1/chat/completions`,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o', messages: [], stream: true }),
      bodyTimeoutMs: 150,
    });
    await expect(events(response)).rejects.toMatchObject({
      kind: 'timeout',
      message: 'upstream stream timeout',
    });
  });

  it('hands over what arrived while the consumer was busy as one piece, and stops the idle clock meanwhile', async () => {
    const response = await client.request({
      url: `${fake.url}/v1/chat/completions`,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o', messages: [], stream: true }),
      bodyTimeoutMs: 150,
    });
    const pieces: string[] = [];
    for await (const piece of response.body) {
      pieces.push(Buffer.from(piece).toString());
      // Held well past the idle timeout: the rest of the stream arrives meanwhile, and no timeout fires.
      if (pieces.length === 1) await new Promise((resolve) => setTimeout(resolve, 400));
    }
    expect(pieces.length).toBeLessThanOrEqual(2);
    const parser = createSseParser();
    const received = [...parser.push(Buffer.from(pieces.join(''))), ...parser.end()];
    expect(isDoneEvent(received[received.length - 1] as SseEvent)).toBe(true);
    const text = received
      .filter((e) => !isDoneEvent(e))
      .map((e) => JSON.parse(e.data).choices[0]?.delta?.content ?? '')
      .join('');
    expect(text).toBe(DEFAULT_FAKE_BEHAVIOUR.reply);
  });

  it('reports a refused connection without the upstream address', async () => {
    const failure = await client
      .request({ url: 'http://127.0.0.1:1/v1/models', method: 'GET' })
      .catch((e) => e);
    expect(failure).toBeInstanceOf(UpstreamFailure);
    expect(failure.kind).toBe('connect');
    expect(failure.message).not.toContain('127.0.0.1');
  });

  it('ends a dropped stream with an error, keeping the chunks received', async () => {
    fake.setBehaviour({ dropAfterChunks: 2 });
    const response = await chat({ stream: true });
    const parser = createSseParser();
    const received: SseEvent[] = [];
    const failure = await (async () => {
      for await (const chunk of response.body) received.push(...parser.push(chunk));
    })().catch((e) => e);
    expect(failure).toBeInstanceOf(UpstreamFailure);
    expect(received.length).toBe(3); // role chunk + 2 content chunks
  });

  it('tells whether the body has ended, already with the piece the end came with', async () => {
    // One answer sent whole; another sent in two parts, the end 100 ms after the first.
    const server = createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      if (req.url === '/whole') res.end('data: {"a":1}\n\ndata: [DONE]\n\n');
      else {
        res.write('data: {"a":1}\n\n');
        setTimeout(() => res.end('data: [DONE]\n\n'), 100);
      }
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const endedAtEachPiece = async (path: string) => {
      const response = await client.request({ url: `${origin}${path}`, method: 'GET' });
      const seen: [string, boolean][] = [];
      expect(response.body.ended).toBe(false);
      for await (const piece of response.body)
        seen.push([Buffer.from(piece).toString(), response.body.ended]);
      expect(response.body.ended).toBe(true);
      return seen;
    };
    try {
      expect(await endedAtEachPiece('/whole')).toEqual([['data: {"a":1}\n\ndata: [DONE]\n\n', true]]);
      expect(await endedAtEachPiece('/parts')).toEqual([
        ['data: {"a":1}\n\n', false],
        ['data: [DONE]\n\n', true],
      ]);
    } finally {
      server.close();
    }
  });

  it('rewrites the data payloads of a 200 stream, lines and characters cut across pieces included', async () => {
    const e = Buffer.from('é');
    const pieces = [
      Buffer.from(': comment\r\ndata: {"t":"h'),
      Buffer.concat([e.subarray(0, 1)]),
      Buffer.concat([
        e.subarray(1),
        Buffer.from('llo"}\r\n\r\nevent: x\ndata:{"t":"2"}\n\ndata: [DONE]\n\ndata: {"t":"tail"}'),
      ]),
    ];
    const server = createServer((req, res) => {
      if (req.url === '/error') {
        res.writeHead(500, { 'content-type': 'application/json' }).end('{"t":"error"}');
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const next = (i: number) => {
        if (i === pieces.length) return void res.end();
        res.write(pieces[i]);
        setTimeout(() => next(i + 1), 15);
      };
      next(0);
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const rewrite = {
      json: (text: string) => `rewritten ${text}`,
      createStream: () => (data: string) => JSON.stringify({ ...JSON.parse(data), seen: true }),
    };
    try {
      const response = await client.request({ url: `${origin}/stream`, method: 'GET', rewrite });
      let text = '';
      for await (const piece of response.body) text += Buffer.from(piece).toString();
      expect(text).toBe(
        ': comment\r\ndata: {"t":"héllo","seen":true}\r\n\r\nevent: x\ndata: {"t":"2","seen":true}\n\n' +
          'data: [DONE]\n\ndata: {"t":"tail","seen":true}',
      );
      const failed = await client.request({ url: `${origin}/error`, method: 'GET', rewrite });
      expect(await failed.readText()).toBe('{"t":"error"}');
    } finally {
      server.close();
    }
  });

  it('refuses an unusable proxy setting without sending anything or repeating it', async () => {
    const before = fake.requests.length;
    for (const proxy of ['ftp://user:s3cret-pass@127.0.0.1:21', 'not a url s3cret-pass']) {
      const error = await client
        .request({ url: `${fake.url}/v1/models`, method: 'GET', proxy })
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(UpstreamFailure);
      expect((error as UpstreamFailure).kind).toBe('connect');
      expect((error as UpstreamFailure).message).not.toContain('s3cret');
    }
    expect(fake.requests.length).toBe(before);
  });
});
