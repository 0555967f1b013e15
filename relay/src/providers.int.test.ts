/**
 * Anthropic and Gemini in both directions, with the official SDKs as clients of a listening relay:
 * `@anthropic-ai/sdk` on `/v1/messages` (an Anthropic channel passed through unread, an OpenAI channel converted),
 * `@google/genai` on `/v1beta` (a Gemini channel passed through, an OpenAI channel converted), the `openai` SDK on
 * Anthropic and Gemini channels (chat and Responses), tool calls and streams included; errors in each client's
 * shape, channel keys never shown, and the bill (cache and thinking tokens) as each provider counts it. What coding
 * agents send that chat cannot say (Codex's custom and namespace tools, Claude Code's signed thinking) converts;
 * Responses' hosted web search becomes the channel's own (or is left out, the client told); and what only the
 * client's own provider runs (Anthropic's and Gemini's server tools) is refused in its shape.
 */
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import { fetchUpstreamModels } from '@turnpike/core/channels/upstream';
import { logs, users } from '@turnpike/core/db/schema/index';
import { eq } from 'drizzle-orm';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runChannelTest } from './health/channel-tester.ts';
import type { RelayChannel } from './state/channel-cache.ts';
import { DEFAULT_FAKE_BEHAVIOUR, type FakeOpenAi, startFakeOpenAi } from './testing/fake-openai.ts';
import {
  DEFAULT_PROVIDER_BEHAVIOUR,
  type FakeProviders,
  startFakeProviders,
} from './testing/fake-providers.ts';
import { createRelayTestApp, type RelayTestApp } from './testing/relay-test-app.ts';
import { waitFor } from './testing/wait.ts';
import { createUpstreamClient } from './upstream/client.ts';

const ANTHROPIC_KEY = 'sk-ant-api03-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe';
const GEMINI_KEY = 'AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY';

let t: RelayTestApp;
let fake: FakeOpenAi;
let providers: FakeProviders;
let address: string;
let key: string;

const weatherTool = {
  name: 'get_weather',
  description: 'Current weather of a city',
  input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] },
};

const consumeLog = (requestId: string) =>
  waitFor(async () => (await t.runtime.deps.db.select().from(logs).where(eq(logs.requestId, requestId)))[0]);

beforeAll(async () => {
  fake = await startFakeOpenAi();
  providers = await startFakeProviders({ apiKey: undefined });
  t = await createRelayTestApp();
  await t.runtime.deps.options.set(
    'ModelRatio',
    JSON.stringify({
      'claude-test': 1,
      'gemini-test': 1,
      'gpt-4o-mini': 1,
      'claude-on-openai': 1,
      'text-embedding-004': 0.1,
      'text-embedding-3-small': 0.1,
      'compat-model': 1,
      'chat-only-model': 1,
    }),
  );
  await t.seedChannel({ key: ANTHROPIC_KEY, baseUrl: providers.url, models: 'claude-test', type: 14 });
  await t.seedChannel({
    key: GEMINI_KEY,
    baseUrl: providers.url,
    models: 'gemini-test,text-embedding-004',
    type: 24,
  });
  await t.seedChannel({
    key: 'sk-upstream',
    baseUrl: fake.url,
    models: 'gpt-4o-mini,claude-on-openai,text-embedding-3-small',
    modelMapping: { 'claude-on-openai': 'gpt-4o-mini' },
  });
  // An OpenAI-compatible upstream that calls tools (the fake providers' chat completions).
  await t.seedChannel({ key: 'sk-compat', baseUrl: providers.url, models: 'compat-model' });
  // An OpenAI-format upstream that serves chat completions only (FastGPT): a Responses client goes through chat.
  await t.seedChannel({ key: 'sk-chat-only', baseUrl: providers.url, models: 'chat-only-model', type: 22 });
  const relay = await t.startRelay();
  address = await relay.listen({ port: 0, host: '127.0.0.1' });
  const user = await t.seedUser({ quota: 50_000_000 });
  key = `sk-${(await t.seedToken(user.id)).key}`;
});

afterAll(async () => {
  await t?.close();
  await Promise.all([fake?.close(), providers?.close()]);
});

const anthropicClient = () => new Anthropic({ apiKey: key, baseURL: address, maxRetries: 0 });
const openAiClient = () => new OpenAI({ apiKey: key, baseURL: `${address}/v1`, maxRetries: 0 });
const geminiClient = () => new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: address } });

describe('Anthropic clients on /v1/messages', () => {
  it('reach an Anthropic channel unread: the body, the channel key and the beta flags go up as sent', async () => {
    providers.requests.length = 0;
    const { data, response } = await anthropicClient()
      .messages.create(
        {
          model: 'claude-test',
          max_tokens: 100,
          messages: [{ role: 'user', content: 'Weather in Paris?' }],
          tools: [weatherTool],
          metadata: { user_id: 'user-1' },
        },
        { headers: { 'anthropic-beta': 'prompt-caching-2024-07-31' } },
      )
      .withResponse();
    expect(data.content.find((block) => block.type === 'text')).toMatchObject({
      text: DEFAULT_PROVIDER_BEHAVIOUR.reply,
    });
    expect(data.content.find((block) => block.type === 'tool_use')).toMatchObject({
      name: 'get_weather',
      input: { city: 'Paris' },
    });
    expect(data.stop_reason).toBe('tool_use');
    const sent = providers.requests.at(-1)!;
    expect(sent.path).toBe('/v1/messages');
    expect(sent.headers['x-api-key']).toBe(ANTHROPIC_KEY);
    // The client's API version goes with the body it shaped (the SDK 1.x speaks 2026-10-21).
    expect(sent.headers['anthropic-version']).toBe('2026-10-21');
    expect(sent.headers['anthropic-beta']).toBe('prompt-caching-2024-07-31');
    expect(sent.body).toMatchObject({
      model: 'claude-test',
      metadata: { user_id: 'user-1' },
      tools: [weatherTool],
    });
    const log = await consumeLog(response.headers.get('x-request-id')!);
    expect(log.promptTokens).toBe(data.usage.input_tokens);
    expect(log.completionTokens).toBe(data.usage.output_tokens);
  });

  it('stream from an Anthropic channel with tools, and the SDK assembles the message', async () => {
    const stream = anthropicClient().messages.stream({
      model: 'claude-test',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'Weather?' }],
      tools: [weatherTool],
    });
    const message = await stream.finalMessage();
    expect(message.content.find((block) => block.type === 'text')).toMatchObject({
      text: DEFAULT_PROVIDER_BEHAVIOUR.reply,
    });
    expect(message.content.find((block) => block.type === 'tool_use')).toMatchObject({
      input: { city: 'Paris' },
    });
    expect(message.usage.output_tokens).toBeGreaterThan(0);
  });

  it('reach an OpenAI channel converted, stream and not', async () => {
    const client = anthropicClient();
    const message = await client.messages.create({
      model: 'claude-on-openai',
      max_tokens: 100,
      system: 'Be brief.',
      messages: [{ role: 'user', content: 'Say hello' }],
    });
    expect(message.type).toBe('message');
    expect(message.content).toEqual([{ type: 'text', text: DEFAULT_FAKE_BEHAVIOUR.reply }]);
    expect(message.stop_reason).toBe('end_turn');
    expect(message.usage.input_tokens).toBeGreaterThan(0);
    const sent = fake.requests.at(-1)!;
    expect(sent.path).toBe('/v1/chat/completions');
    expect(sent.body).toMatchObject({
      model: 'gpt-4o-mini',
      max_tokens: 100,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Say hello' },
      ],
    });

    const events: string[] = [];
    const stream = client.messages.stream({
      model: 'claude-on-openai',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'hi' }],
    });
    stream.on('streamEvent', (event) => events.push(event.type));
    const final = await stream.finalMessage();
    expect(final.content).toEqual([{ type: 'text', text: DEFAULT_FAKE_BEHAVIOUR.reply }]);
    expect(final.usage.output_tokens).toBeGreaterThan(0);
    expect(events[0]).toBe('message_start');
    expect(events.at(-1)).toBe('message_stop');
  });

  it('count tokens on an Anthropic channel, and from the relay own count for any other channel', async () => {
    providers.requests.length = 0;
    const counted = await anthropicClient().messages.countTokens({
      model: 'claude-test',
      messages: [{ role: 'user', content: 'hello' }],
    });
    expect(counted.input_tokens).toBeGreaterThan(0);
    expect(providers.requests.at(-1)?.path).toBe('/v1/messages/count_tokens');
    fake.requests.length = 0;
    const local = await anthropicClient().messages.countTokens({
      model: 'claude-on-openai',
      system: 'Be brief.',
      messages: [{ role: 'user', content: 'hello there' }],
    });
    expect(local.input_tokens).toBeGreaterThan(3);
    expect(fake.requests).toHaveLength(0);
  });

  it('get errors in Anthropic shape: a bad key, a bad request, an overloaded upstream', async () => {
    const bad = new Anthropic({ apiKey: 'sk-nope', baseURL: address, maxRetries: 0 });
    const ask = { model: 'claude-test', max_tokens: 10, messages: [{ role: 'user' as const, content: 'x' }] };
    type SdkError = InstanceType<typeof Anthropic.APIError>;
    const caught = (error: unknown): SdkError => error as SdkError;
    const refused = (await bad.messages.create(ask).catch(caught)) as SdkError;
    expect(refused).toBeInstanceOf(Anthropic.AuthenticationError);
    expect(refused.error).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
    const missing = await fetch(`${address}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'claude-test',
        messages: [{ role: 'user', content: 'x' }],
        stream: 'yes',
      }),
    });
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    providers.setBehaviour({ errorStatus: 529, errorMessage: 'Overloaded' });
    try {
      const overloaded = (await anthropicClient().messages.create(ask).catch(caught)) as SdkError;
      expect(overloaded.status).toBe(529);
      expect(overloaded.error).toMatchObject({ type: 'error', error: { type: 'overloaded_error' } });
    } finally {
      providers.setBehaviour({ errorStatus: undefined });
    }
  });

  it('refuse a body the gateway cannot read in Anthropic shape, through the front door and through Fastify', async () => {
    for (const contentType of ['application/json', 'application/json; charset=utf-8', 'text/plain']) {
      const response = await fetch(`${address}/v1/messages`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': contentType },
        body: '{"model":',
      });
      expect(response.status, contentType).toBe(400);
      expect(await response.json(), contentType).toMatchObject({
        type: 'error',
        error: { type: 'invalid_request_error' },
      });
    }
  });

  it('list models in Anthropic shape', async () => {
    const page = await anthropicClient().models.list();
    expect(page.data.map((model) => model.id)).toContain('claude-test');
    expect(page.data[0]?.type).toBe('model');
  });
});

describe('the openai SDK on Anthropic and Gemini channels', () => {
  for (const model of ['claude-test', 'gemini-test']) {
    it(`chats with ${model}: text, tool calls and the usage`, async () => {
      const answer = await openAiClient().chat.completions.create({
        model,
        messages: [{ role: 'user', content: 'Weather in Paris?' }],
        tools: [
          { type: 'function', function: { name: 'get_weather', parameters: weatherTool.input_schema } },
        ],
      });
      const choice = answer.choices[0]!;
      expect(choice.message.content).toBe(DEFAULT_PROVIDER_BEHAVIOUR.reply);
      expect(choice.message.tool_calls?.[0]).toMatchObject({
        function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
      });
      expect(choice.finish_reason).toBe('tool_calls');
      expect(answer.usage?.prompt_tokens).toBeGreaterThan(0);
    });

    it(`streams from ${model} with tool calls and the usage chunk`, async () => {
      const stream = await openAiClient().chat.completions.create({
        model,
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: 'user', content: 'Weather?' }],
        tools: [
          { type: 'function', function: { name: 'get_weather', parameters: weatherTool.input_schema } },
        ],
      });
      let text = '';
      let args = '';
      let finish: string | null | undefined;
      let usage: OpenAI.CompletionUsage | undefined | null;
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta.content ?? '';
        args += chunk.choices[0]?.delta.tool_calls?.[0]?.function?.arguments ?? '';
        finish = chunk.choices[0]?.finish_reason ?? finish;
        usage = chunk.usage ?? usage;
      }
      expect(text).toBe(DEFAULT_PROVIDER_BEHAVIOUR.reply);
      expect(JSON.parse(args)).toEqual({ city: 'Paris' });
      expect(finish).toBe('tool_calls');
      expect(usage?.completion_tokens).toBeGreaterThan(0);
    });

    it(`answers Responses clients from ${model}, stream and not`, async () => {
      const client = openAiClient();
      const response = await client.responses.create({
        model,
        input: 'Say hello',
        instructions: 'Be brief.',
      });
      expect(response.output_text).toBe(DEFAULT_PROVIDER_BEHAVIOUR.reply);
      expect(response.usage?.input_tokens).toBeGreaterThan(0);
      const stream = await client.responses.create({ model, input: 'Say hello', stream: true });
      let text = '';
      let completed: OpenAI.Responses.Response | undefined;
      for await (const event of stream) {
        if (event.type === 'response.output_text.delta') text += event.delta;
        if (event.type === 'response.completed') completed = event.response;
      }
      expect(text).toBe(DEFAULT_PROVIDER_BEHAVIOUR.reply);
      expect(completed?.usage?.output_tokens).toBeGreaterThan(0);
    });
  }

  it('embeds through a Gemini channel (batchEmbedContents) and bills the counted input', async () => {
    providers.requests.length = 0;
    const { data, response } = await openAiClient()
      .embeddings.create({ model: 'text-embedding-004', input: ['one', 'two'], encoding_format: 'float' })
      .withResponse();
    expect(data.data.map((item) => item.embedding)).toEqual([
      [0.1, 0.2, 0.3],
      [0.1, 0.2, 0.3],
    ]);
    const sent = providers.requests.at(-1)!;
    expect(sent.path).toBe('/v1beta/models/text-embedding-004:batchEmbedContents');
    expect(sent.body).toMatchObject({
      requests: [
        { model: 'models/text-embedding-004', content: { parts: [{ text: 'one' }] } },
        { model: 'models/text-embedding-004', content: { parts: [{ text: 'two' }] } },
      ],
    });
    const log = await consumeLog(response.headers.get('x-request-id')!);
    expect(log.promptTokens).toBeGreaterThan(0);
    expect(JSON.parse(log.other ?? '{}').usage_counted).toBe(true);
  });

  it('maps reasoning_effort to Anthropic thinking and surfaces it as reasoning_content', async () => {
    const answer = await openAiClient().chat.completions.create({
      model: 'claude-test',
      max_tokens: 4000,
      reasoning_effort: 'low',
      messages: [{ role: 'user', content: 'Think first.' }],
    });
    expect((answer.choices[0]!.message as { reasoning_content?: string }).reasoning_content).toBe(
      DEFAULT_PROVIDER_BEHAVIOUR.thinking,
    );
    expect(providers.requests.at(-1)?.body).toMatchObject({
      thinking: { type: 'enabled', budget_tokens: 1024 },
    });
  });

  it('never shows the channel key an upstream echoes in its error', async () => {
    providers.setBehaviour({
      errorStatus: 500,
      errorMessage: `Invalid API key provided: ${GEMINI_KEY} (ends ...kFMBWY)`,
    });
    try {
      const error = await openAiClient()
        .chat.completions.create({ model: 'gemini-test', messages: [{ role: 'user', content: 'x' }] })
        .catch((e: unknown) => e as InstanceType<typeof OpenAI.APIError>);
      expect(error).toBeInstanceOf(OpenAI.APIError);
      const text = JSON.stringify((error as InstanceType<typeof OpenAI.APIError>).error);
      expect(text).toContain('[redacted]');
      expect(text).not.toContain(GEMINI_KEY);
      expect(text).not.toContain('kFMBWY');
    } finally {
      providers.setBehaviour({ errorStatus: undefined });
    }
  });
});

describe('fields the gateway acts on', () => {
  it('refuses a stream flag or stream options of the wrong type with a 400 in the caller protocol', async () => {
    const send = (path: string, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
      fetch(`${address}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      });
    const messages = [{ role: 'user', content: 'hi' }];
    for (const wrong of [
      { stream: 'yes' },
      { stream: 1 },
      { stream: true, stream_options: { include_usage: 'yes' } },
      { stream: true, stream_options: 'x' },
    ]) {
      const response = await send('/v1/chat/completions', { model: 'gpt-4o-mini', messages, ...wrong });
      expect(response.status, JSON.stringify(wrong)).toBe(400);
      expect(await response.json()).toMatchObject({
        error: { type: 'invalid_request_error', code: 'invalid_request' },
      });
    }
    const responses = await send('/v1/responses', { model: 'gpt-4o-mini', input: 'hi', stream: 'yes' });
    expect(responses.status).toBe(400);
    const noMax = await send('/v1/messages', { model: 'claude-test', messages }, { 'x-api-key': key });
    expect(noMax.status).toBe(400);
    expect(await noMax.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    const gemini = await send('/v1beta/models/gemini-test:generateContent', { contents: 'hi' });
    expect(gemini.status).toBe(400);
    expect(await gemini.json()).toMatchObject({ error: { code: 400, status: 'INVALID_ARGUMENT' } });
  });
});

describe('Gemini clients on /v1beta', () => {
  it('reach a Gemini channel unread, with tools, and the key goes up as the channel key', async () => {
    providers.requests.length = 0;
    const answer = await geminiClient().models.generateContent({
      model: 'gemini-test',
      contents: 'Weather in Paris?',
      config: {
        tools: [
          { functionDeclarations: [{ name: 'get_weather', parametersJsonSchema: weatherTool.input_schema }] },
        ],
      },
    });
    expect(answer.text).toBe(DEFAULT_PROVIDER_BEHAVIOUR.reply);
    expect(answer.functionCalls?.[0]).toMatchObject({ name: 'get_weather', args: { city: 'Paris' } });
    expect(answer.usageMetadata?.promptTokenCount).toBeGreaterThan(0);
    const sent = providers.requests.at(-1)!;
    expect(sent.path).toBe('/v1beta/models/gemini-test:generateContent');
    expect(sent.headers['x-goog-api-key']).toBe(GEMINI_KEY);
  });

  it('stream from a Gemini channel and from an OpenAI channel converted', async () => {
    for (const model of ['gemini-test', 'gpt-4o-mini']) {
      const stream = await geminiClient().models.generateContentStream({ model, contents: 'Say hello' });
      let text = '';
      let usage: unknown;
      for await (const chunk of stream) {
        text += chunk.text ?? '';
        usage = chunk.usageMetadata ?? usage;
      }
      expect(text, model).toBe(
        model === 'gemini-test' ? DEFAULT_PROVIDER_BEHAVIOUR.reply : DEFAULT_FAKE_BEHAVIOUR.reply,
      );
      expect(usage, model).toMatchObject({ promptTokenCount: expect.any(Number) });
    }
  });

  it('stream as one JSON array when the client does not ask for alt=sse, passed through and converted', async () => {
    for (const model of ['gemini-test', 'gpt-4o-mini']) {
      const response = await fetch(`${address}/v1beta/models/${model}:streamGenerateContent`, {
        method: 'POST',
        headers: { 'x-goog-api-key': key, 'content-type': 'application/json' },
        body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hello' }] }] }),
      });
      expect(response.headers.get('content-type'), model).toContain('application/json');
      const elements = (await response.json()) as {
        candidates?: { content: { parts: { text?: string }[] } }[];
        usageMetadata?: { promptTokenCount: number };
      }[];
      const text = elements
        .flatMap((element) => element.candidates?.[0]?.content.parts ?? [])
        .map((part) => part.text ?? '')
        .join('');
      expect(text, model).toBe(
        model === 'gemini-test' ? DEFAULT_PROVIDER_BEHAVIOUR.reply : DEFAULT_FAKE_BEHAVIOUR.reply,
      );
      expect(elements.at(-1)?.usageMetadata?.promptTokenCount, model).toBeGreaterThan(0);
    }
  });

  it('embed through an OpenAI-compatible channel: /v1/embeddings up, Gemini vectors back, billed by its usage', async () => {
    const user = await t.seedUser({ quota: 1_000_000 });
    const own = new GoogleGenAI({
      apiKey: `sk-${(await t.seedToken(user.id)).key}`,
      httpOptions: { baseUrl: address },
    });
    fake.requests.length = 0;
    const result = await own.models.embedContent({
      model: 'text-embedding-3-small',
      contents: ['first text', 'second text'],
      config: { outputDimensionality: 8 },
    });
    // The fake's vectors: sin(index + i + 1), rounded to 6 places.
    const vector = (index: number) =>
      Array.from({ length: 8 }, (_, i) => Math.round(Math.sin(index + i + 1) * 1e6) / 1e6);
    expect(result.embeddings?.map((embedding) => embedding.values)).toEqual([vector(0), vector(1)]);
    const sent = fake.requests.at(-1)!;
    expect(sent.path).toBe('/v1/embeddings');
    expect(sent.body).toEqual({
      model: 'text-embedding-3-small',
      input: ['first text', 'second text'],
      encoding_format: 'float',
      dimensions: 8,
    });
    const requestId = result.sdkHttpResponse?.headers?.['x-request-id'];
    expect(requestId).toBeTruthy();
    const log = await consumeLog(String(requestId));
    const other = JSON.parse(log.other ?? '{}') as Record<string, unknown>;
    // The upstream's prompt_tokens, not a count of the relay's own.
    expect(other.usage_counted).toBeUndefined();
    expect(log.promptTokens).toBeGreaterThan(0);
    expect(log.completionTokens).toBe(0);
    expect(log.quota).toBeGreaterThan(0);
    const row = () => t.runtime.deps.db.select().from(users).where(eq(users.id, user.id));
    await waitFor(async () => ((await row())[0]?.requestCount === 1 ? true : undefined));
    expect((await row())[0]).toMatchObject({ quota: 1_000_000 - log.quota, usedQuota: log.quota });
  });

  it('answer a single :embedContent from an OpenAI-compatible channel as { embedding: { values } }', async () => {
    fake.requests.length = 0;
    const response = await fetch(`${address}/v1beta/models/text-embedding-3-small:embedContent`, {
      method: 'POST',
      headers: { 'x-goog-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({
        content: { parts: [{ text: 'alpha' }, { text: 'beta' }] },
        taskType: 'RETRIEVAL_QUERY',
      }),
    });
    expect(response.status).toBe(200);
    const answer = (await response.json()) as { embedding: { values: number[] } };
    expect(answer).toEqual({ embedding: { values: expect.any(Array) } });
    expect(answer.embedding.values).toHaveLength(8);
    expect(fake.requests.at(-1)?.body).toEqual({
      model: 'text-embedding-3-small',
      input: 'alpha\nbeta',
      encoding_format: 'float',
    });
    const log = await consumeLog(response.headers.get('x-request-id')!);
    expect(log.promptTokens).toBeGreaterThan(0);
  });

  it('refuse a batch of differing outputDimensionality for an OpenAI-compatible channel, in Gemini shape', async () => {
    fake.requests.length = 0;
    const response = await fetch(`${address}/v1beta/models/text-embedding-3-small:batchEmbedContents`, {
      method: 'POST',
      headers: { 'x-goog-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({
        requests: [
          { content: { parts: [{ text: 'a' }] }, outputDimensionality: 8 },
          { content: { parts: [{ text: 'b' }] }, outputDimensionality: 16 },
        ],
      }),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      error: {
        code: 400,
        status: 'INVALID_ARGUMENT',
        message: expect.stringContaining('outputDimensionality'),
      },
    });
    expect(fake.requests).toHaveLength(0);
  });

  it('take the key from ?key= and answer errors in Gemini shape', async () => {
    const ok = await fetch(`${address}/v1beta/models/gemini-test:countTokens?key=${key}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hello' }] }] }),
    });
    expect(ok.status).toBe(200);
    expect((await ok.json()).totalTokens).toBeGreaterThan(0);
    const refused = await fetch(`${address}/v1beta/models/gemini-test:generateContent?key=bad`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hello' }] }] }),
    });
    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({ error: { code: 401, status: 'UNAUTHENTICATED' } });
    const list = await fetch(`${address}/v1beta/models`, { headers: { 'x-goog-api-key': key } });
    expect((await list.json()).models.map((m: { name: string }) => m.name)).toContain('models/gemini-test');
  });
});

describe('channel tools for these types', () => {
  const channelOf = (type: number, key: string): RelayChannel => ({
    id: 900 + type,
    other: '',
    name: `test ${type}`,
    type,
    key,
    baseUrl: providers.url,
    status: 1,
    autoBan: true,
    modelMapping: {},
    statusCodeMapping: undefined,
    paramOverride: undefined,
    headers: {},
    organization: undefined,
  });

  it('tests Anthropic and Gemini channels in their own formats, and reads their refusals', async () => {
    const upstream = createUpstreamClient();
    try {
      for (const [type, secret, model] of [
        [14, ANTHROPIC_KEY, 'claude-test'],
        [24, GEMINI_KEY, 'gemini-test'],
      ] as const) {
        const result = await runChannelTest(upstream, channelOf(type, secret), model, {
          settings: t.runtime.deps.options,
        });
        expect(result.ok, String(type)).toBe(true);
        if (result.ok) expect(result.usage.promptTokens).toBeGreaterThan(0);
      }
      providers.setBehaviour({ apiKey: 'another-key-entirely-0123456789' });
      const refused = await runChannelTest(upstream, channelOf(14, ANTHROPIC_KEY), 'claude-test', {
        settings: t.runtime.deps.options,
      });
      expect(refused.ok).toBe(false);
      if (!refused.ok) {
        expect(refused.error.status).toBe(401);
        expect(refused.error.type).toBe('authentication_error');
        expect(refused.error.message).not.toContain(ANTHROPIC_KEY.slice(8));
      }
    } finally {
      providers.setBehaviour({ apiKey: undefined });
      await upstream.close();
    }
  });

  it("fetches an Anthropic channel's model list with Anthropic's key header and version", async () => {
    expect(await fetchUpstreamModels(14, providers.url, ANTHROPIC_KEY)).toEqual(['claude-test']);
  });

  it('sends a request of the upstream format unchanged when global.pass_through_request_enabled is on', async () => {
    const options = t.runtime.deps.options;
    await options.set('global.pass_through_request_enabled', 'true');
    try {
      fake.requests.length = 0;
      const stream = await openAiClient().chat.completions.create({
        model: 'gpt-4o-mini',
        stream: true,
        messages: [{ role: 'user', content: 'hi' }],
      });
      let text = '';
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
      expect(text).toBe(DEFAULT_FAKE_BEHAVIOUR.reply);
      expect(fake.requests.at(-1)?.body).not.toHaveProperty('stream_options');
    } finally {
      await options.set('global.pass_through_request_enabled', 'false');
    }
  });
});

describe('coding agents on converted paths', () => {
  it("compacts Codex's history: OpenAI's own compaction passed through, a billed summary from Claude and Gemini", async () => {
    const client = openAiClient();
    const history: OpenAI.Responses.ResponseInputItem[] = [
      { role: 'user', content: 'Fix the failing test in parser.ts.' },
      { role: 'assistant', content: 'The off-by-one is in line 12.' },
      { role: 'user', content: 'Go on.' },
    ];
    fake.requests.length = 0;
    const openai = await client.responses.compact({ model: 'gpt-4o-mini', input: history }).withResponse();
    expect(fake.requests.at(-1)).toMatchObject({ path: '/v1/responses/compact', body: { input: history } });
    expect(openai.data.object).toBe('response.compaction');
    expect(openai.data.output.at(-1)).toMatchObject({ type: 'compaction' });
    const openaiLog = await consumeLog(openai.response.headers.get('x-request-id')!);
    expect(openaiLog.promptTokens).toBe(openai.data.usage.input_tokens);
    expect(openaiLog.quota).toBeGreaterThan(0);

    for (const model of ['claude-test', 'gemini-test']) {
      const { data, response } = await client.responses.compact({ model, input: history }).withResponse();
      const sent = providers.requests.at(-1)!;
      expect(sent.path, model).toContain(model === 'claude-test' ? '/v1/messages' : ':generateContent');
      expect(JSON.stringify(sent.body), model).toContain('handoff summary');
      expect(data.object).toBe('response.compaction');
      // The user's messages, then one compaction item: the relay's, holding the summary.
      expect(data.output.map((item) => item.type)).toEqual(['message', 'message', 'compaction']);
      const texts = data.output.map((item) => {
        const part = (item as { content?: { type?: string; text?: string }[] }).content?.[0];
        return part?.type === 'input_text' ? part.text : '';
      });
      expect(texts.slice(0, 2)).toEqual(['Fix the failing test in parser.ts.', 'Go on.']);
      const compaction = data.output[2] as { encrypted_content: string };
      expect(compaction.encrypted_content).toMatch(/^turnpike\.compaction\.v1\./);
      const log = await consumeLog(response.headers.get('x-request-id')!);
      expect(log.promptTokens, model).toBe(data.usage.input_tokens);
      expect(log.completionTokens, model).toBe(data.usage.output_tokens);
      expect(log.quota, model).toBeGreaterThan(0);
      // The compacted history goes on: on this channel and on OpenAI's, the summary is read back as a user message.
      const next = [
        ...(data.output as OpenAI.Responses.ResponseInputItem[]),
        { role: 'user' as const, content: 'And now?' },
      ];
      await client.responses.create({ model, input: next });
      expect(JSON.stringify(providers.requests.at(-1)?.body)).toContain(
        `compacted by the gateway):\\n\\n${DEFAULT_PROVIDER_BEHAVIOUR.reply}`,
      );
      fake.requests.length = 0;
      await client.responses.create({ model: 'gpt-4o-mini', input: next });
      const toOpenAi = JSON.stringify(fake.requests.at(-1)?.body);
      expect(toOpenAi).toContain(`compacted by the gateway):\\n\\n${DEFAULT_PROVIDER_BEHAVIOUR.reply}`);
      expect(toOpenAi).not.toContain(compaction.encrypted_content);
    }
    // Codex's remote compaction v2: a streamed turn ending in compaction_trigger, answered with one compaction item.
    const trigger = [...history, { type: 'compaction_trigger' }] as never;
    const stream = client.responses.stream({ model: 'claude-test', input: trigger });
    const done = await stream.finalResponse();
    expect(done.output.map((item) => item.type)).toEqual(['compaction']);
    expect(JSON.stringify(providers.requests.at(-1)?.body)).toContain('handoff summary');
    expect(done.usage?.output_tokens).toBeGreaterThan(0);
    const streamed = await client.responses
      .compact({ model: 'claude-test', input: history, stream: true } as never)
      .catch((error: unknown) => error as InstanceType<typeof OpenAI.APIError>);
    expect(streamed).toBeInstanceOf(OpenAI.BadRequestError);
  });

  const PATCH = '*** Begin Patch\n*** Add File: hello.txt\n+hello\n*** End Patch';
  const codexTools: OpenAI.Responses.Tool[] = [
    { type: 'function', name: 'shell', parameters: { type: 'object', properties: {} }, strict: false },
    {
      type: 'custom',
      name: 'apply_patch',
      description: 'Edits files.',
      format: { type: 'grammar', syntax: 'lark', definition: 'start: "*** Begin Patch" /(.|\\n)*/' },
    },
  ];

  it('Codex custom tools reach an Anthropic channel as functions and come back as custom_tool_call items', async () => {
    providers.setBehaviour({ toolCall: { name: 'apply_patch', args: { input: PATCH } } });
    try {
      const client = openAiClient();
      const response = await client.responses.create({
        model: 'claude-test',
        input: 'Add hello.txt',
        tools: codexTools,
      });
      expect(response.output.find((item) => item.type === 'custom_tool_call')).toMatchObject({
        type: 'custom_tool_call',
        name: 'apply_patch',
        input: PATCH,
        call_id: 'toolu_fake_1',
      });
      const sent = providers.requests.at(-1)!;
      expect(sent.body.tools).toEqual([
        { name: 'shell', input_schema: { type: 'object', properties: {} } },
        {
          name: 'apply_patch',
          description: expect.stringContaining('lark grammar'),
          input_schema: {
            type: 'object',
            properties: { input: { type: 'string', description: expect.any(String) } },
            required: ['input'],
          },
        },
      ]);

      const stream = await client.responses.create({
        model: 'claude-test',
        input: 'Add hello.txt',
        tools: codexTools,
        stream: true,
      });
      let input = '';
      let completed: OpenAI.Responses.Response | undefined;
      for await (const event of stream) {
        if (event.type === 'response.custom_tool_call_input.done') input = event.input;
        if (event.type === 'response.completed') completed = event.response;
      }
      expect(input).toBe(PATCH);
      expect(completed?.output.find((item) => item.type === 'custom_tool_call')).toMatchObject({
        input: PATCH,
      });

      // The call and its output go back as the history of the next turn.
      const next = await client.responses.create({
        model: 'claude-test',
        tools: codexTools,
        input: [
          { role: 'user', content: 'Add hello.txt' },
          { type: 'custom_tool_call', call_id: 'toolu_fake_1', name: 'apply_patch', input: PATCH },
          {
            type: 'custom_tool_call_output',
            call_id: 'toolu_fake_1',
            output: 'Success. Updated: A hello.txt',
          },
        ],
      });
      expect(next.output_text).toBe(DEFAULT_PROVIDER_BEHAVIOUR.reply);
      expect(providers.requests.at(-1)?.body.messages).toEqual([
        { role: 'user', content: [{ type: 'text', text: 'Add hello.txt' }] },
        {
          role: 'assistant',
          content: [{ type: 'tool_use', id: 'toolu_fake_1', name: 'apply_patch', input: { input: PATCH } }],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_fake_1', content: 'Success. Updated: A hello.txt' },
          ],
        },
      ]);
    } finally {
      providers.setBehaviour({ toolCall: undefined });
    }
  });

  it("keeps Claude's signed thinking through a Codex tool loop (encrypted_content), stream and not", async () => {
    const client = openAiClient();
    const ask = {
      model: 'claude-test',
      reasoning: { effort: 'low' as const },
      include: ['reasoning.encrypted_content' as const],
      max_output_tokens: 4000,
      tools: [
        {
          type: 'function' as const,
          name: 'get_weather',
          parameters: weatherTool.input_schema,
          strict: false,
        },
      ],
    };
    const first = await client.responses.create({ ...ask, input: 'Weather in Paris?' });
    const reasoning = first.output.find((item) => item.type === 'reasoning');
    expect(reasoning?.encrypted_content).toEqual(expect.any(String));
    const stream = await client.responses.create({ ...ask, input: 'Weather in Paris?', stream: true });
    let streamed: OpenAI.Responses.Response | undefined;
    for await (const event of stream) if (event.type === 'response.completed') streamed = event.response;
    expect(streamed?.output.find((item) => item.type === 'reasoning')?.encrypted_content).toBe(
      reasoning?.encrypted_content,
    );

    const call = first.output.find((item) => item.type === 'function_call')!;
    const history = (keep: boolean): OpenAI.Responses.ResponseInput => [
      { role: 'user', content: 'Weather in Paris?' },
      ...(first.output.filter(
        (item) => keep || item.type !== 'reasoning',
      ) as OpenAI.Responses.ResponseInputItem[]),
      { type: 'function_call_output', call_id: call.call_id, output: 'Sunny' },
    ];
    await client.responses.create({ ...ask, input: history(true) });
    const sent = providers.requests.at(-1)!.body;
    expect(sent.thinking).toMatchObject({ type: 'enabled' });
    expect((sent.messages as { role: string; content: unknown[] }[])[1]?.content[0]).toEqual({
      type: 'thinking',
      thinking: DEFAULT_PROVIDER_BEHAVIOUR.thinking,
      signature: 'sig',
    });
    // A client that did not keep it: the tool loop goes on without thinking rather than be refused.
    await client.responses.create({ ...ask, input: history(false) });
    expect(providers.requests.at(-1)!.body).not.toHaveProperty('thinking');
    // An OpenAI channel of the same model never gets the relay's reasoning item.
    fake.requests.length = 0;
    await client.responses.create({ ...ask, model: 'gpt-4o-mini', input: history(true) });
    expect(JSON.stringify(fake.requests.at(-1)?.body)).not.toContain(String(reasoning?.encrypted_content));
  });

  it('maps web search to Anthropic and Gemini, leaves other built-in tools out saying so, refuses an unknown previous_response_id, and passes them to OpenAI', async () => {
    const client = openAiClient();
    type SdkError = InstanceType<typeof OpenAI.APIError>;
    const ask = {
      input: 'news?',
      tools: [{ type: 'web_search' as const }, { type: 'file_search' as const, vector_store_ids: ['vs_1'] }],
    };
    const claude = await client.responses.create({ ...ask, model: 'claude-test' }).withResponse();
    expect(claude.data.output_text).toBe(DEFAULT_PROVIDER_BEHAVIOUR.reply);
    expect(providers.requests.at(-1)?.body.tools).toEqual([
      { type: 'web_search_20250305', name: 'web_search' },
    ]);
    expect(claude.response.headers.get('x-turnpike-dropped-tools')).toBe('file_search');
    const claudeLog = await consumeLog(claude.response.headers.get('x-request-id')!);
    expect(JSON.parse(String(claudeLog.other))).toMatchObject({ dropped_tools: ['file_search'] });
    const gemini = await client.responses
      .create({ ...ask, model: 'gemini-test', stream: false })
      .withResponse();
    expect(gemini.data.output_text).toBe(DEFAULT_PROVIDER_BEHAVIOUR.reply);
    expect(providers.requests.at(-1)?.body.tools).toEqual([{ googleSearch: {} }]);
    // An OpenAI-compatible chat upstream has no web search: both are left out, in a stream too.
    const stream = await client.responses
      .create({ ...ask, model: 'chat-only-model', stream: true })
      .withResponse();
    for await (const _event of stream.data) {
      // read to the end
    }
    expect(stream.response.headers.get('x-turnpike-dropped-tools')).toBe('web_search, file_search');
    expect(providers.requests.at(-1)?.body).not.toHaveProperty('tools');
    expect(providers.requests.at(-1)?.body).not.toHaveProperty('hosted_tools');
    const streamLog = await consumeLog(stream.response.headers.get('x-request-id')!);
    expect(JSON.parse(String(streamLog.other))).toMatchObject({
      dropped_tools: ['web_search', 'file_search'],
    });
    // An id the gateway never issued is OpenAI's 400 on any channel (stored chains: responses-store/).
    const requestsBefore = providers.requests.length;
    const stored = (await client.responses
      .create({ model: 'gemini-test', input: 'more', previous_response_id: 'resp_abc' })
      .catch((error: unknown) => error)) as SdkError;
    expect(stored).toBeInstanceOf(OpenAI.BadRequestError);
    expect(stored.code).toBe('previous_response_not_found');
    expect(providers.requests.length).toBe(requestsBefore);

    fake.requests.length = 0;
    const first = await client.responses.create({ model: 'gpt-4o-mini', input: 'news?' });
    const passed = await client.responses.create({
      model: 'gpt-4o-mini',
      input: 'news?',
      tools: [{ type: 'web_search' }],
      previous_response_id: first.id,
    });
    expect(passed.output_text).toBe(DEFAULT_FAKE_BEHAVIOUR.reply);
    expect(fake.requests.at(-1)?.body).toMatchObject({
      tools: [{ type: 'web_search' }],
      previous_response_id: first.id,
    });
  });

  it('takes Anthropic web search to Gemini as googleSearch, leaves it out of an OpenAI channel saying so, refuses other server tools, and passes them to Anthropic', async () => {
    const client = anthropicClient();
    const search = { type: 'web_search_20250305' as const, name: 'web_search' as const, max_uses: 2 };
    const ask = { max_tokens: 100, messages: [{ role: 'user' as const, content: 'news?' }], tools: [search] };
    const onGemini = await client.messages.create({ ...ask, model: 'gemini-test' }).withResponse();
    expect(onGemini.data.content[0]).toMatchObject({ type: 'text', text: DEFAULT_PROVIDER_BEHAVIOUR.reply });
    expect(providers.requests.at(-1)?.body.tools).toEqual([{ googleSearch: {} }]);
    expect(onGemini.response.headers.get('x-turnpike-dropped-tools')).toBeNull();
    fake.requests.length = 0;
    const onOpenAi = await client.messages.create({ ...ask, model: 'claude-on-openai' }).withResponse();
    expect(onOpenAi.data.type).toBe('message');
    expect(onOpenAi.response.headers.get('x-turnpike-dropped-tools')).toBe('web_search');
    expect(fake.requests.at(-1)?.body).not.toHaveProperty('tools');
    expect(fake.requests.at(-1)?.body).not.toHaveProperty('hosted_tools');
    const log = await consumeLog(onOpenAi.response.headers.get('x-request-id')!);
    expect(JSON.parse(String(log.other))).toMatchObject({ dropped_tools: ['web_search'] });
    const refused = (await client.messages
      .create({
        ...ask,
        tools: [{ type: 'code_execution_20250522', name: 'code_execution' }] as never,
        model: 'claude-on-openai',
      })
      .catch((error: unknown) => error)) as InstanceType<typeof Anthropic.APIError>;
    expect(refused).toBeInstanceOf(Anthropic.BadRequestError);
    expect(refused.error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    expect(refused.message).toContain('server tool code_execution_20250522 (code_execution)');
    const message = await client.messages.create({ ...ask, model: 'claude-test' });
    expect(message.type).toBe('message');
    expect(providers.requests.at(-1)?.body.tools).toEqual(ask.tools);
  });

  it('takes Gemini grounding to Anthropic as its web search tool, refuses code execution, and passes them to Gemini', async () => {
    const ask = { contents: 'news?', config: { tools: [{ googleSearch: {} }] } };
    const onClaude = await geminiClient().models.generateContent({ ...ask, model: 'claude-test' });
    expect(onClaude.text).toBe(DEFAULT_PROVIDER_BEHAVIOUR.reply);
    expect(providers.requests.at(-1)?.body.tools).toEqual([
      { type: 'web_search_20250305', name: 'web_search' },
    ]);
    const refused = await geminiClient()
      .models.generateContent({
        contents: 'run it',
        config: { tools: [{ codeExecution: {} }] },
        model: 'gpt-4o-mini',
      })
      .catch((error: unknown) => error as Error & { status?: number });
    expect(refused).toBeInstanceOf(Error);
    expect((refused as { status?: number }).status).toBe(400);
    expect((refused as Error).message).toContain('INVALID_ARGUMENT');
    expect((refused as Error).message).toContain('built-in tool codeExecution');
    const answer = await geminiClient().models.generateContent({ ...ask, model: 'gemini-test' });
    expect(answer.text).toBe(DEFAULT_PROVIDER_BEHAVIOUR.reply);
    expect(providers.requests.at(-1)?.body.tools).toEqual([{ googleSearch: {} }]);
  });

  it('Anthropic thinking: unsigned blocks out of a converted path, signed history accepted on either path', async () => {
    const client = anthropicClient();
    const first = await client.messages.create({
      model: 'compat-model',
      max_tokens: 8000,
      thinking: { type: 'enabled', budget_tokens: 4000 },
      messages: [{ role: 'user', content: 'Think, then answer.' }],
    });
    expect(first.content).toEqual([
      { type: 'thinking', thinking: DEFAULT_PROVIDER_BEHAVIOUR.thinking, signature: '' },
      { type: 'text', text: DEFAULT_PROVIDER_BEHAVIOUR.reply },
    ]);
    const history: Anthropic.MessageParam[] = [
      { role: 'user', content: 'Weather?' },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'SIGNED REASONING', signature: 'EqQBCkYIBxgCKkB' },
          { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3p' },
          { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
        ],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'Sunny' }] },
      { role: 'assistant', content: first.content as Anthropic.ContentBlockParam[] },
      { role: 'user', content: 'Thanks.' },
    ];
    const ask = {
      max_tokens: 8000,
      thinking: { type: 'enabled' as const, budget_tokens: 4000 },
      tools: [weatherTool],
    };
    // Converted: no thinking of any kind goes up, as text or otherwise.
    const converted = await client.messages.create({ ...ask, model: 'compat-model', messages: history });
    expect(converted.stop_reason).toBe('end_turn');
    const chat = JSON.stringify(providers.requests.at(-1)?.body);
    expect(providers.requests.at(-1)?.path).toBe('/v1/chat/completions');
    for (const secret of [
      'SIGNED REASONING',
      'EmwKAhgBEgy3va3p',
      'EqQBCkYIBxgCKkB',
      DEFAULT_PROVIDER_BEHAVIOUR.thinking,
    ])
      expect(chat).not.toContain(secret);
    // Passed through: Anthropic's own signed blocks go up, the unsigned one the relay wrote does not.
    await client.messages.create({ ...ask, model: 'claude-test', messages: history });
    const messages = providers.requests.at(-1)?.body.messages as { content: unknown }[];
    expect(messages[1]?.content).toEqual(history[1]?.content);
    expect(messages[3]?.content).toEqual([{ type: 'text', text: DEFAULT_PROVIDER_BEHAVIOUR.reply }]);
  });
});
