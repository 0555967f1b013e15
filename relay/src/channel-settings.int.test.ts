/**
 * Reference parity, issue 21 items 4 and 5, through the whole relay against the fake upstreams: reasoning-model
 * conveniences (`-high`/`-medium`/`-low`, `max_completion_tokens`), image input tokens by the tile formula, the
 * per-channel outbound proxy (HTTP and SOCKS5, credentials never shown), and the `force_format` and
 * `thinking_to_content` channel settings, stream and non-stream.
 */
import { logs } from '@turnpike/core/db/schema/index';
import { type FakeProxy, startHttpProxy, startSocks5Proxy } from '@turnpike/core/testing/fake-proxies';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runChannelTest } from './health/channel-tester.ts';
import { tileTokens, UNKNOWN_IMAGE_TOKENS } from './metering/image-tokens.ts';
import { createSseParser, isDoneEvent } from './sse.ts';
import { type FakeOpenAi, startFakeOpenAi } from './testing/fake-openai.ts';
import { createRelayTestApp, type RelayTestApp } from './testing/relay-test-app.ts';
import { waitFor } from './testing/wait.ts';
import { createUpstreamClient } from './upstream/client.ts';

const PROXY_USER = 'relay-user';
const PROXY_PASSWORD = 'pr0xy-Secret-9f8e7d';

let t: RelayTestApp;
let fake: FakeOpenAi;
let fakeNoUsage: FakeOpenAi;
let fakeThinking: FakeOpenAi;
let fakeLoose: FakeOpenAi;
let httpProxy: FakeProxy;
let socksProxy: FakeProxy;
let closedProxyUrl: string;
let auth: Record<string, string>;

const consumeLog = (requestId: string) =>
  waitFor(async () => (await t.runtime.deps.db.select().from(logs).where(eq(logs.requestId, requestId)))[0]);

const chat = (body: Record<string, unknown>) =>
  t.relay.inject({ method: 'POST', url: '/v1/chat/completions', headers: auth, payload: body });

const hello = [{ role: 'user', content: 'Say hello' }];

interface Chunk {
  readonly object?: string;
  readonly choices: {
    readonly index?: number;
    readonly delta?: { readonly content?: string; readonly reasoning_content?: string };
    readonly finish_reason?: string | null;
  }[];
}

/** The JSON chunks of an SSE answer (without `[DONE]`). */
function chunksOf(body: string): Chunk[] {
  const parser = createSseParser();
  const events = [...parser.push(Buffer.from(body)), ...parser.end()];
  return events.filter((event) => !isDoneEvent(event)).map((event) => JSON.parse(event.data));
}

const withProxy = (url: string, credentials = `${PROXY_USER}:${PROXY_PASSWORD}`) =>
  url.replace('://', `://${credentials}@`);

function png(width: number, height: number): string {
  const b = Buffer.alloc(33);
  b.writeUInt32BE(0x89504e47, 0);
  b.writeUInt32BE(0x0d0a1a0a, 4);
  b.writeUInt32BE(13, 8);
  b.write('IHDR', 12, 'latin1');
  b.writeUInt32BE(width, 16);
  b.writeUInt32BE(height, 20);
  return `data:image/png;base64,${b.toString('base64')}`;
}

beforeAll(async () => {
  fake = await startFakeOpenAi();
  fakeNoUsage = await startFakeOpenAi({ omitUsage: true });
  fakeThinking = await startFakeOpenAi({ reasoning: 'Let me think about greetings.', reply: 'Hello there!' });
  fakeLoose = await startFakeOpenAi({ looseShape: true, reply: 'Hello there!' });
  httpProxy = await startHttpProxy({ username: PROXY_USER, password: PROXY_PASSWORD });
  socksProxy = await startSocks5Proxy({ username: PROXY_USER, password: PROXY_PASSWORD });
  const closed = await startHttpProxy();
  closedProxyUrl = closed.url;
  await closed.close();

  t = await createRelayTestApp();
  const models = [
    'o3-mini-high',
    'gpt-5-low',
    'gpt-4o-mini',
    'count-model',
    'http-proxied',
    'socks-proxied',
    'wrong-password',
    'dead-proxy',
    'thinking-model',
    'format-model',
  ];
  await t.runtime.deps.options.set(
    'ModelRatio',
    JSON.stringify(Object.fromEntries(models.map((m) => [m, 1]))),
  );
  await t.seedChannel({
    key: 'sk-upstream',
    baseUrl: fake.url,
    models: 'o3-mini-high,gpt-5-low,gpt-4o-mini',
  });
  await t.seedChannel({
    key: 'sk-upstream',
    baseUrl: fakeNoUsage.url,
    models: 'count-model',
    modelMapping: { 'count-model': 'gpt-4o' },
  });
  const proxied = (model: string, proxy: string) =>
    t.seedChannel({
      key: 'sk-upstream',
      baseUrl: fake.url,
      models: model,
      modelMapping: { [model]: 'gpt-4o-mini' },
      autoBan: 0,
      setting: { proxy },
    });
  await proxied('http-proxied', withProxy(httpProxy.url));
  await proxied('socks-proxied', withProxy(socksProxy.url));
  await proxied('wrong-password', withProxy(httpProxy.url, `${PROXY_USER}:not-${PROXY_PASSWORD}`));
  await proxied('dead-proxy', withProxy(closedProxyUrl));
  await t.seedChannel({
    key: 'sk-upstream',
    baseUrl: fakeThinking.url,
    models: 'thinking-model',
    modelMapping: { 'thinking-model': 'deepseek-reasoner' },
    setting: { thinking_to_content: true },
  });
  await t.seedChannel({
    key: 'sk-upstream',
    baseUrl: fakeLoose.url,
    models: 'format-model',
    modelMapping: { 'format-model': 'gpt-4o-mini' },
    setting: { force_format: true },
  });
  await t.startRelay();
  const user = await t.seedUser({ quota: 10_000_000 });
  const token = await t.seedToken(user.id);
  auth = { authorization: `Bearer sk-${token.key}` };
});

afterAll(async () => {
  await t?.close();
  await Promise.all(
    [fake, fakeNoUsage, fakeThinking, fakeLoose, httpProxy, socksProxy].map((s) => s?.close()),
  );
});

describe('reasoning-model conveniences', () => {
  it('a -high suffix asks the upstream for reasoning_effort high without the suffix, billed as requested', async () => {
    fake.requests.length = 0;
    const response = await chat({
      model: 'o3-mini-high',
      messages: hello,
      max_tokens: 200,
      temperature: 0.2,
    });
    expect(response.statusCode).toBe(200);
    const sent = fake.requests[0]?.body as Record<string, unknown>;
    expect(sent).toMatchObject({ model: 'o3-mini', reasoning_effort: 'high', max_completion_tokens: 200 });
    expect(sent).not.toHaveProperty('max_tokens');
    expect(sent).not.toHaveProperty('temperature');
    // Routed by the channel listing `o3-mini-high`, and billed under that name, as the reference does.
    const log = await consumeLog(response.headers['x-request-id'] as string);
    expect(log.modelName).toBe('o3-mini-high');
    expect(log.quota).toBeGreaterThan(0);
  });

  it('gpt-5 models get max_completion_tokens too; -low sets the effort', async () => {
    fake.requests.length = 0;
    const response = await chat({ model: 'gpt-5-low', messages: hello, max_tokens: 50, stream: true });
    expect(response.statusCode).toBe(200);
    expect(fake.requests[0]?.body).toMatchObject({
      model: 'gpt-5',
      reasoning_effort: 'low',
      max_completion_tokens: 50,
    });
  });

  it('other models keep max_tokens and temperature as sent', async () => {
    fake.requests.length = 0;
    await chat({ model: 'gpt-4o-mini', messages: hello, max_tokens: 20, temperature: 0.3 });
    const sent = fake.requests[0]?.body as Record<string, unknown>;
    expect(sent).toMatchObject({ model: 'gpt-4o-mini', max_tokens: 20, temperature: 0.3 });
    expect(sent).not.toHaveProperty('max_completion_tokens');
    expect(sent).not.toHaveProperty('reasoning_effort');
  });

  it('counts an inline image by its tiles when the relay counts the prompt itself', async () => {
    const ask = (url: string) =>
      chat({
        model: 'count-model',
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'what is this?' },
              { type: 'image_url', image_url: { url } },
            ],
          },
        ],
      });
    const inline = await ask(png(2048, 4096));
    const remote = await ask('https://images.invalid/cat.png');
    expect(inline.statusCode).toBe(200);
    const inlineLog = await consumeLog(inline.headers['x-request-id'] as string);
    const remoteLog = await consumeLog(remote.headers['x-request-id'] as string);
    // 2048 x 4096 -> 1024 x 2048 -> 768 x 1536: 6 tiles, 1105 tokens; the remote image keeps the flat 255.
    expect(inlineLog.promptTokens - remoteLog.promptTokens).toBe(
      tileTokens('gpt-4o', 'auto', { width: 2048, height: 4096 }) - UNKNOWN_IMAGE_TOKENS,
    );
    expect(inlineLog.promptTokens - remoteLog.promptTokens).toBe(1105 - 255);
  });
});

describe('per-channel outbound proxy', () => {
  it('sends every call of the channel through its HTTP proxy, with the proxy credentials', async () => {
    const before = fake.requests.length;
    const plain = await chat({ model: 'http-proxied', messages: hello });
    expect(plain.statusCode).toBe(200);
    const streamed = await chat({ model: 'http-proxied', messages: hello, stream: true });
    expect(chunksOf(streamed.body).length).toBeGreaterThan(2);
    const host = new URL(fake.url).host;
    expect(httpProxy.targets.filter((target) => target === host).length).toBeGreaterThanOrEqual(2);
    // The proxy took its credentials off; the upstream never sees them.
    const upstreamSaw = fake.requests.slice(before);
    expect(upstreamSaw).toHaveLength(2);
    expect(upstreamSaw.every((request) => request.headers['proxy-authorization'] === undefined)).toBe(true);
  });

  it('sends every call of the channel through its SOCKS5 proxy', async () => {
    const response = await chat({ model: 'socks-proxied', messages: hello });
    expect(response.statusCode).toBe(200);
    expect(response.json().choices[0].message.content).toContain('fake OpenAI');
    expect(socksProxy.targets).toContain(new URL(fake.url).host);
  });

  it('tests a channel through its proxy too', async () => {
    const upstream = createUpstreamClient();
    try {
      const before = socksProxy.targets.length;
      const result = await runChannelTest(
        upstream,
        {
          id: 9999,
          other: '',
          name: 'proxied',
          type: 1,
          key: 'sk-upstream',
          baseUrl: fake.url,
          status: 1,
          autoBan: false,
          modelMapping: {},
          statusCodeMapping: undefined,
          paramOverride: undefined,
          headers: {},
          organization: undefined,
          proxy: withProxy(socksProxy.url),
        },
        'gpt-4o-mini',
        { settings: t.runtime.deps.options },
      );
      expect(result.ok).toBe(true);
      expect(socksProxy.targets.length).toBe(before + 1);
    } finally {
      await upstream.close();
    }
  });

  it('channels without a proxy connect directly', async () => {
    const targets = httpProxy.targets.length + socksProxy.targets.length;
    expect((await chat({ model: 'gpt-4o-mini', messages: hello })).statusCode).toBe(200);
    expect(httpProxy.targets.length + socksProxy.targets.length).toBe(targets);
  });

  it('never shows the proxy address or password when the proxy refuses or is down', async () => {
    for (const model of ['wrong-password', 'dead-proxy']) {
      const response = await chat({ model, messages: hello });
      expect(response.statusCode).toBeGreaterThanOrEqual(400);
      expect(response.body).not.toContain(PROXY_PASSWORD);
      expect(response.body).not.toContain(PROXY_USER);
      expect(response.body).not.toContain(new URL(httpProxy.url).port);
      expect(response.body).not.toContain(new URL(closedProxyUrl).port);
    }
    expect(httpProxy.refusedCount).toBeGreaterThan(0);
  });
});

describe('channel settings that rewrite answers', () => {
  it('thinking_to_content puts the reasoning into content inside <think> (non-stream)', async () => {
    const response = await chat({ model: 'thinking-model', messages: hello });
    const message = response.json().choices[0].message;
    expect(message.content).toBe('<think>\nLet me think about greetings.\n</think>\nHello there!');
    expect(message).not.toHaveProperty('reasoning_content');
  });

  it('thinking_to_content puts the reasoning into content inside <think> (stream)', async () => {
    const response = await chat({ model: 'thinking-model', messages: hello, stream: true });
    const chunks = chunksOf(response.body);
    const text = chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? '').join('');
    expect(text).toBe('<think>\nLet me think about greetings.\n</think>\nHello there!');
    expect(chunks.some((chunk) => chunk.choices[0]?.delta?.reasoning_content !== undefined)).toBe(false);
    const log = await consumeLog(response.headers['x-request-id'] as string);
    expect(log.completionTokens).toBeGreaterThan(0);
  });

  it('force_format answers in the documented chat shape (non-stream)', async () => {
    fakeLoose.requests.length = 0;
    const answer = (await chat({ model: 'format-model', messages: hello })).json();
    expect(answer.object).toBe('chat.completion');
    expect(answer).not.toHaveProperty('x_vendor');
    expect(answer.choices[0]).toMatchObject({
      index: 0,
      message: { role: 'assistant', content: 'Hello there!' },
      finish_reason: 'stop',
    });
  });

  it('force_format answers in the documented chunk shape (stream)', async () => {
    const response = await chat({ model: 'format-model', messages: hello, stream: true });
    const chunks = chunksOf(response.body);
    expect(chunks.length).toBeGreaterThan(2);
    for (const chunk of chunks) {
      expect(chunk.object).toBe('chat.completion.chunk');
      expect(chunk).not.toHaveProperty('x_vendor');
      for (const choice of chunk.choices) {
        expect(choice.index).toBe(0);
        expect(choice).toHaveProperty('finish_reason');
      }
    }
    expect(chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? '').join('')).toBe('Hello there!');
  });
});
