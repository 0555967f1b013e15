/**
 * The providers issue 26 left for last (docs/adr/0024): iFlytek Spark's HTTP API (18), AI Proxy (21),
 * Xinference's rerank (47), Vertex AI's and Bedrock's embeddings, and Wenxin's errors inside a 200 (15). Each
 * behind a fake that speaks the provider's wire and checks its credential (testing/fake-hosts.ts,
 * testing/fake-clouds.ts); usage billed; errors answered in the caller's protocol and classified per provider.
 */
import { generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import { createChannelKeyBox } from '@turnpike/core/channels/channel-key';
import { fetchUpstreamModels } from '@turnpike/core/channels/upstream';
import { channels, logs, users } from '@turnpike/core/db/schema/index';
import { ChannelStatus } from '@turnpike/core/domain/closed-sets';
import { eq } from 'drizzle-orm';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runChannelTest } from './health/channel-tester.ts';
import { toRelayChannel } from './state/channel-cache.ts';
import { type FakeClouds, fakeVector, startFakeClouds, WENXIN_REPLY } from './testing/fake-clouds.ts';
import { type FakeHosts, SPARK_REPLY, startFakeHosts } from './testing/fake-hosts.ts';
import { DEFAULT_FAKE_BEHAVIOUR, type FakeOpenAi, startFakeOpenAi } from './testing/fake-openai.ts';
import { createRelayTestApp, type RelayTestApp } from './testing/relay-test-app.ts';
import { waitFor } from './testing/wait.ts';
import { createUpstreamClient } from './upstream/client.ts';

const STARTING_QUOTA = 50_000_000;
const SPARK_PASSWORD = 'AbCdEfGhIjKlMnOpQrSt:UvWxYz0123456789';
const XINFERENCE_KEY = 'sk-xinference-0123456789';
const AIPROXY_KEY = 'ap-0123456789abcdef0123456789abcdef';
const AWS = {
  accessKeyId: 'AKIAIOSFODNN7EXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
};
const REGION = 'us-east-1';
const BAIDU_KEY = 'Q9mE2rS7tV4wX1yZ6aB3cD8e|F5gH0iJ2kL7mN4oP9qR1sT6uV3wX8y';
const VERTEX_EMAIL = 'embed@turnpike-test.iam.gserviceaccount.com';
const AZURE_KEY = '7d1c0e9a4b3f4e2a9c8d6b5a4f3e2d1c';
/** The Vertex golden fixture: a client's request, Vertex's answer and stream in its framing, what clients get. */
const golden = JSON.parse(
  readFileSync(path.join(import.meta.dirname, 'providers/vertex/__fixtures__/gemini-chat.json'), 'utf8'),
) as {
  channel: { other: string; project: string };
  model: string;
  clientRequest: {
    max_tokens: number;
    temperature: number;
    messages: { role: 'system' | 'user'; content: string }[];
  };
  upstreamPath: string;
  upstreamRequest: Record<string, unknown>;
  upstreamAnswer: { candidates: unknown[]; usageMetadata: Record<string, unknown> };
  upstreamStream: unknown[];
  upstreamStreamSeparator: string;
  expectedOpenAi: { content: string; finishReason: string; usage: Record<string, number> };
  expectedAnthropic: Record<string, unknown>;
};
const vertexKeys = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  publicKeyEncoding: { type: 'spki', format: 'pem' },
  privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
});

let t: RelayTestApp;
let hosts: FakeHosts;
let clouds: FakeClouds;
let openAiHost: FakeOpenAi;
let aiProxyHost: FakeOpenAi;
let address: string;
let key: string;
let userId: number;
let sparkId: number;
let oldSparkId: number;
let deniedWenxinId: number;

const consumeLog = (requestId: string | null) =>
  waitFor(
    async () =>
      (
        await t.runtime.deps.db
          .select()
          .from(logs)
          .where(eq(logs.requestId, requestId ?? ''))
      )[0],
  );
const statusOf = async (id: number) =>
  (await t.runtime.deps.db.select().from(channels).where(eq(channels.id, id)))[0]!.status;

/** The consume log of a call, and the books balance: the user's quota plus every consume log is the start. */
async function billed(requestId: string | null) {
  const log = await consumeLog(requestId);
  expect(log.quota).toBeGreaterThan(0);
  await waitFor(async () => {
    const spent = (await t.runtime.deps.db.select().from(logs).where(eq(logs.userId, userId))).reduce(
      (sum, row) => sum + row.quota,
      0,
    );
    const quota = (await t.runtime.deps.db.select().from(users).where(eq(users.id, userId)))[0]!.quota;
    return quota + spent === STARTING_QUOTA ? true : undefined;
  });
  return log;
}

beforeAll(async () => {
  openAiHost = await startFakeOpenAi();
  aiProxyHost = await startFakeOpenAi({ apiKey: AIPROXY_KEY });
  hosts = await startFakeHosts({
    sparkPassword: SPARK_PASSWORD,
    xinferenceKey: XINFERENCE_KEY,
    dashscopeKey: 'sk-dashscope-models',
    cloudflare: { token: 'cf-token-models', account: 'acct-7' },
  });
  clouds = await startFakeClouds({
    openAiUrl: openAiHost.url,
    providersUrl: openAiHost.url,
    azureKey: AZURE_KEY,
    vertexAccount: { email: VERTEX_EMAIL, publicKeyPem: vertexKeys.publicKey },
    vertexReplay: {
      model: golden.model,
      answer: golden.upstreamAnswer,
      stream: golden.upstreamStream,
      separator: golden.upstreamStreamSeparator,
    },
    aws: { ...AWS, region: REGION, apiKey: 'unused-api-key' },
    baiduKey: BAIDU_KEY,
  });
  t = await createRelayTestApp();
  await t.runtime.deps.options.set(
    'ModelRatio',
    JSON.stringify({
      '4.0Ultra': 1,
      'SparkDesk-v3.5': 1,
      x1: 1,
      'spark-old-key': 1,
      'gpt-3.5-turbo': 1,
      'text-embedding-3-small': 0.1,
      'bge-reranker-v2-m3': 0.5,
      'text-embedding-005': 0.1,
      'amazon.titan-embed-text-v2:0': 0.1,
      'cohere.embed-english-v3': 0.1,
      'ernie-busy': 1,
      'ernie-denied': 1,
      'ernie-bad': 1,
      [golden.model]: 1,
      'gpt-4o-mini': 1,
    }),
  );
  sparkId = (
    await t.seedChannel({
      type: 18,
      key: SPARK_PASSWORD,
      baseUrl: `${hosts.url}/spark`,
      models: '4.0Ultra,SparkDesk-v3.5,x1',
    })
  ).id;
  oldSparkId = (
    await t.seedChannel({
      type: 18,
      key: '5f2a9c1e|NDQ3ZjEwYjI5ZGI3|9b0f5c4e2d1a',
      baseUrl: `${hosts.url}/spark`,
      models: 'spark-old-key',
      name: 'spark websocket key',
    })
  ).id;
  await t.seedChannel({
    type: 21,
    key: AIPROXY_KEY,
    baseUrl: aiProxyHost.url,
    models: 'gpt-3.5-turbo,text-embedding-3-small',
  });
  await t.seedChannel({
    type: 47,
    key: XINFERENCE_KEY,
    baseUrl: `${hosts.url}/xinference`,
    models: 'bge-reranker-v2-m3',
  });
  await t.seedChannel({
    type: 41,
    key: JSON.stringify({
      type: 'service_account',
      project_id: 'turnpike-embed',
      private_key_id: 'k1',
      private_key: vertexKeys.privateKey,
      client_email: VERTEX_EMAIL,
      token_uri: `${clouds.url}/token`,
    }),
    baseUrl: clouds.url,
    other: 'us-central1',
    models: 'text-embedding-005',
  });
  await t.seedChannel({
    type: 41,
    key: JSON.stringify({
      type: 'service_account',
      project_id: golden.channel.project,
      private_key_id: 'k1',
      private_key: vertexKeys.privateKey,
      client_email: VERTEX_EMAIL,
      token_uri: `${clouds.url}/token`,
    }),
    baseUrl: clouds.url,
    other: golden.channel.other,
    models: golden.model,
  });
  await t.seedChannel({ type: 3, key: AZURE_KEY, baseUrl: clouds.url, models: 'gpt-4o-mini' });
  await t.seedChannel({
    type: 33,
    key: `${AWS.accessKeyId}|${AWS.secretAccessKey}|${REGION}`,
    baseUrl: clouds.url,
    models: 'amazon.titan-embed-text-v2:0,cohere.embed-english-v3',
  });
  // Wenxin: a rate-limited channel first (priority), then one that answers; one without permission; a bad request.
  await t.seedChannel({
    type: 15,
    key: BAIDU_KEY,
    baseUrl: `${clouds.url}/baidu`,
    models: 'ernie-busy,ernie-bad',
    priority: 10,
    modelMapping: { 'ernie-busy': 'ernie-qps-limit', 'ernie-bad': 'ernie-bad-request' },
    name: 'wenxin busy',
  });
  await t.seedChannel({
    type: 15,
    key: BAIDU_KEY,
    baseUrl: `${clouds.url}/baidu`,
    models: 'ernie-busy',
    modelMapping: { 'ernie-busy': 'ERNIE-4.0-8K' },
    name: 'wenxin fine',
  });
  deniedWenxinId = (
    await t.seedChannel({
      type: 15,
      key: BAIDU_KEY,
      baseUrl: `${clouds.url}/baidu`,
      models: 'ernie-denied',
      modelMapping: { 'ernie-denied': 'ernie-no-permission' },
      name: 'wenxin denied',
    })
  ).id;
  await t.runtime.deps.options.set('AutomaticDisableChannelEnabled', 'true');
  const relay = await t.startRelay();
  address = await relay.listen({ port: 0, host: '127.0.0.1' });
  const user = await t.seedUser({ quota: STARTING_QUOTA });
  userId = user.id;
  key = `sk-${(await t.seedToken(user.id)).key}`;
});

afterAll(async () => {
  await t?.close();
  await Promise.all([hosts?.close(), clouds?.close(), openAiHost?.close(), aiProxyHost?.close()]);
});

const openAiClient = () => new OpenAI({ apiKey: key, baseURL: `${address}/v1`, maxRetries: 0 });
const anthropicClient = () => new Anthropic({ apiKey: key, baseURL: address, maxRetries: 0 });
const geminiClient = () => new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: address } });

describe('iFlytek Spark (18), its HTTP API', () => {
  it('chats with the APIPassword as a bearer at /v1/chat/completions, billed by the usage Spark reports', async () => {
    const { data, response } = await openAiClient()
      .chat.completions.create({ model: '4.0Ultra', messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    expect(data.choices[0]?.message.content).toBe(SPARK_REPLY);
    const sent = hosts.requests.at(-1)!;
    expect(sent.path).toBe('/spark/v1/chat/completions');
    expect(sent.headers.authorization).toBe(`Bearer ${SPARK_PASSWORD}`);
    const log = await billed(response.headers.get('x-request-id'));
    expect(log.completionTokens).toBe(5);
  });

  it('streams its data: lines to OpenAI and Anthropic clients, sends x1 to /v2 and old model names as HTTP ones', async () => {
    let text = '';
    let usage: unknown;
    for await (const chunk of await openAiClient().chat.completions.create({
      model: 'x1',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'hi' }],
    })) {
      text += chunk.choices[0]?.delta.content ?? '';
      usage ??= chunk.usage ?? undefined;
    }
    expect(text).toBe(SPARK_REPLY);
    expect(usage).toMatchObject({ completion_tokens: 5 });
    expect(hosts.requests.at(-1)?.path).toBe('/spark/v2/chat/completions');
    const message = await anthropicClient().messages.create({
      model: 'SparkDesk-v3.5',
      max_tokens: 20,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(message.content[0]).toMatchObject({ type: 'text', text: SPARK_REPLY });
    expect(hosts.requests.at(-1)?.body.model).toBe('generalv3.5');
  });

  it("refuses the WebSocket API's APPID|APISecret|APIKey with a message naming the APIPassword, never sending it", async () => {
    const before = hosts.requests.length;
    const failed = await openAiClient()
      .chat.completions.create({ model: 'spark-old-key', messages: [{ role: 'user', content: 'hi' }] })
      .catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(OpenAI.APIError);
    expect(hosts.requests.length).toBe(before);
    await waitFor(async () =>
      (await statusOf(oldSparkId)) === ChannelStatus.AutoDisabled ? true : undefined,
    );
    // The console's channel test says what to do.
    const upstream = createUpstreamClient();
    try {
      const [row] = await t.runtime.deps.db.select().from(channels).where(eq(channels.id, oldSparkId));
      const channel = toRelayChannel(row!, createChannelKeyBox(t.runtime.deps.config.cryptoSecret));
      const result = await runChannelTest(upstream, channel, 'spark-old-key', {
        settings: t.runtime.deps.options,
      });
      expect(result.ok).toBe(false);
      expect(!result.ok && result.error.message).toContain('APIPassword');
    } finally {
      await upstream.close();
    }
    expect(hosts.requests.length).toBe(before);
  });

  it("reads Spark's errors inside a 200: moderation is the caller's 400, a daily limit a 429, neither disables", async () => {
    const refused = await openAiClient()
      .chat.completions.create({ model: '4.0Ultra', messages: [{ role: 'user', content: 'MODERATE-ME' }] })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect((refused as InstanceType<typeof OpenAI.BadRequestError>).message).toContain('10013');
    const limited = await openAiClient()
      .chat.completions.create({ model: '4.0Ultra', messages: [{ role: 'user', content: 'DAILY-LIMIT' }] })
      .catch((error: unknown) => error);
    expect(limited).toBeInstanceOf(OpenAI.APIError);
    expect((limited as InstanceType<typeof OpenAI.APIError>).status).toBe(429);
    expect(await statusOf(sparkId)).toBe(ChannelStatus.Enabled);
    // in a stream, Spark's error event ends it with that error, in the client's protocol
    const streamed = await (async () => {
      let text = '';
      for await (const chunk of await openAiClient().chat.completions.create({
        model: '4.0Ultra',
        stream: true,
        messages: [{ role: 'user', content: 'MODERATE-OUTPUT' }],
      }))
        text += chunk.choices[0]?.delta.content ?? '';
      return text;
    })().catch((error: unknown) => error);
    expect(streamed).toBeInstanceOf(OpenAI.APIError);
    expect(String((streamed as Error).message)).toContain('10014');
  });

  it('tests a Spark channel from the console', async () => {
    const upstream = createUpstreamClient();
    try {
      const [row] = await t.runtime.deps.db.select().from(channels).where(eq(channels.id, sparkId));
      const channel = toRelayChannel(row!, createChannelKeyBox(t.runtime.deps.config.cryptoSecret));
      const result = await runChannelTest(upstream, channel, '4.0Ultra', {
        settings: t.runtime.deps.options,
      });
      expect(result.ok).toBe(true);
    } finally {
      await upstream.close();
    }
  });
});

describe('AI Proxy (21)', () => {
  it('chats and embeds through its OpenAI-compatible API with the key as a bearer, billed', async () => {
    const { data, response } = await openAiClient()
      .chat.completions.create({ model: 'gpt-3.5-turbo', messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    expect(data.choices[0]?.message.content).toBe(DEFAULT_FAKE_BEHAVIOUR.reply);
    expect(aiProxyHost.requests.at(-1)?.path).toBe('/v1/chat/completions');
    await billed(response.headers.get('x-request-id'));
    const embedded = await openAiClient().embeddings.create({
      model: 'text-embedding-3-small',
      input: 'hello',
    });
    expect(embedded.data).toHaveLength(1);
    expect(aiProxyHost.requests.at(-1)?.path).toBe('/v1/embeddings');
  });
});

describe('Xinference (47)', () => {
  it('reranks at /v1/rerank and bills the tokens its meta reports', async () => {
    const response = await fetch(`${address}/v1/rerank`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'bge-reranker-v2-m3',
        query: 'A man is eating pasta.',
        documents: ['A man is eating food.', 'A man is riding a horse.', 'A woman is playing violin.'],
        top_n: 2,
        return_documents: true,
      }),
    });
    expect(response.status).toBe(200);
    const answer = (await response.json()) as { results: { index: number; relevance_score: number }[] };
    expect(answer.results.map((r) => r.index)).toEqual([0, 1]);
    const sent = hosts.requests.at(-1)!;
    expect(sent.path).toBe('/xinference/v1/rerank');
    expect(sent.headers.authorization).toBe(`Bearer ${XINFERENCE_KEY}`);
    const log = await billed(response.headers.get('x-request-id'));
    const texts = [
      'A man is eating pasta.',
      'A man is eating food.',
      'A man is riding a horse.',
      'A woman is playing violin.',
    ];
    expect(log.promptTokens).toBe(Math.ceil(texts.join(' ').length / 4));
  });
});

describe('Vertex AI embeddings (41)', () => {
  it("embeds through :predict with an exchanged token, answered in OpenAI's shape, billed by token_count", async () => {
    const { data, response } = await openAiClient()
      .embeddings.create({ model: 'text-embedding-005', input: ['hello world', 'good night'], dimensions: 8 })
      .withResponse();
    expect(data.data.map((d) => d.embedding)).toEqual([
      fakeVector('hello world', 8),
      fakeVector('good night', 8),
    ]);
    expect(data.usage.prompt_tokens).toBe(3 + 3);
    const sent = clouds.requests.at(-1)!;
    expect(sent.path).toBe(
      '/v1/projects/turnpike-embed/locations/us-central1/publishers/google/models/text-embedding-005:predict',
    );
    expect(sent.body).toEqual({
      instances: [{ content: 'hello world' }, { content: 'good night' }],
      parameters: { outputDimensionality: 8 },
    });
    expect(sent.headers.authorization).toMatch(/^Bearer ya29\./);
    const log = await billed(response.headers.get('x-request-id'));
    expect(log.promptTokens).toBe(6);
  });

  it("serves a Gemini client's embedContent from :predict", async () => {
    const answer = await geminiClient().models.embedContent({
      model: 'text-embedding-005',
      contents: 'hello world',
    });
    expect(answer.embeddings?.[0]?.values).toEqual(fakeVector('hello world', 768));
  });
});

describe('Bedrock embeddings (33)', () => {
  it('embeds with Titan through a SigV4-signed InvokeModel, billed by inputTextTokenCount', async () => {
    const { data, response } = await openAiClient()
      .embeddings.create({ model: 'amazon.titan-embed-text-v2:0', input: 'hello world', dimensions: 256 })
      .withResponse();
    expect(data.data[0]?.embedding).toEqual(fakeVector('hello world', 256));
    const sent = clouds.requests.at(-1)!;
    expect(sent.path).toBe('/model/amazon.titan-embed-text-v2%3A0/invoke');
    expect(sent.body).toEqual({ inputText: 'hello world', dimensions: 256 });
    expect(String(sent.headers.authorization)).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE\//);
    const log = await billed(response.headers.get('x-request-id'));
    expect(log.promptTokens).toBe(3);
  });

  it("answers several inputs to Titan as the caller's 400 without calling Bedrock; Cohere embed takes a list", async () => {
    const before = clouds.requests.length;
    const failed = await openAiClient()
      .embeddings.create({ model: 'amazon.titan-embed-text-v2:0', input: ['a', 'b'] })
      .catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(OpenAI.BadRequestError);
    expect((failed as InstanceType<typeof OpenAI.BadRequestError>).message).toContain('one text a request');
    expect(clouds.requests.length).toBe(before);
    const { data, response } = await openAiClient()
      .embeddings.create({ model: 'cohere.embed-english-v3', input: ['alpha', 'beta'] })
      .withResponse();
    expect(data.data.map((d) => d.embedding)).toEqual([fakeVector('alpha', 1024), fakeVector('beta', 1024)]);
    expect(clouds.requests.at(-1)?.body).toEqual({ texts: ['alpha', 'beta'], input_type: 'search_document' });
    await billed(response.headers.get('x-request-id'));
  });
});

describe("Wenxin's errors inside a 200 answer (15)", () => {
  it('retries a rate limit (error_code 18) on the next channel, which answers', async () => {
    await t.runtime.deps.options.set('RetryTimes', '1');
    const { data, response } = await openAiClient()
      .chat.completions.create({ model: 'ernie-busy', messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    expect(data.choices[0]?.message.content).toBe(WENXIN_REPLY);
    const paths = clouds.requests.slice(-2).map((r) => r.path);
    expect(paths).toEqual([
      '/baidu/rpc/2.0/ai_custom/v1/wenxinworkshop/chat/ernie-qps-limit',
      '/baidu/rpc/2.0/ai_custom/v1/wenxinworkshop/chat/completions_pro',
    ]);
    await billed(response.headers.get('x-request-id'));
    await t.runtime.deps.options.set('RetryTimes', '0');
  });

  it("answers a request Wenxin refuses as the caller's 400 in OpenAI's and Anthropic's shapes, charging nothing", async () => {
    const quota = (await t.runtime.deps.db.select().from(users).where(eq(users.id, userId)))[0]!.quota;
    const failed = await openAiClient()
      .chat.completions.create({ model: 'ernie-bad', messages: [{ role: 'user', content: 'hi' }] })
      .catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(OpenAI.BadRequestError);
    expect((failed as InstanceType<typeof OpenAI.BadRequestError>).message).toContain('336003');
    const refused = await anthropicClient()
      .messages.create({ model: 'ernie-bad', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(Anthropic.BadRequestError);
    expect((refused as InstanceType<typeof Anthropic.BadRequestError>).error).toMatchObject({
      type: 'error',
      error: { message: expect.stringContaining('336003') },
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await t.runtime.deps.db.select().from(users).where(eq(users.id, userId)))[0]!.quota).toBe(quota);
  });

  it('disables a channel whose key has no permission (error_code 6)', async () => {
    const failed = await openAiClient()
      .chat.completions.create({ model: 'ernie-denied', messages: [{ role: 'user', content: 'hi' }] })
      .catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(OpenAI.APIError);
    await waitFor(async () =>
      (await statusOf(deniedWenxinId)) === ChannelStatus.AutoDisabled ? true : undefined,
    );
  });
});

describe('model lists of the console', () => {
  it("fetches Qwen's compatible-mode list, Cloudflare's account list and AI Proxy's, each with its bearer", async () => {
    expect(await fetchUpstreamModels(17, `${hosts.url}/dashscope`, 'sk-dashscope-models')).toEqual([
      'qwen-plus',
      'qwen-max',
      'text-embedding-v3',
    ]);
    expect(
      await fetchUpstreamModels(39, `${hosts.url}/cloudflare`, 'cf-token-models', { other: 'acct-7' }),
    ).toEqual(['@cf/meta/llama-3.1-8b-instruct', '@cf/baai/bge-base-en-v1.5']);
    await expect(fetchUpstreamModels(39, `${hosts.url}/cloudflare`, 'cf-token-models')).rejects.toThrow(
      /account id/,
    );
    await expect(
      fetchUpstreamModels(39, `${hosts.url}/cloudflare`, 'wrong', { other: 'acct-7' }),
    ).rejects.toThrow(/403/);
    expect(await fetchUpstreamModels(21, aiProxyHost.url, AIPROXY_KEY)).toEqual(
      expect.arrayContaining(['gpt-3.5-turbo']),
    );
  });
});

describe('Vertex AI golden fixture (providers/vertex/__fixtures__/gemini-chat.json), replayed by the fake', () => {
  const request = () => ({ model: golden.model, ...golden.clientRequest });

  it("sends the fixture's Gemini request and answers an OpenAI client with the fixture's output, billed", async () => {
    const { data, response } = await openAiClient().chat.completions.create(request()).withResponse();
    const sent = clouds.requests.at(-1)!;
    expect(sent.path).toBe(`${golden.upstreamPath}:generateContent`);
    expect(sent.body).toEqual(golden.upstreamRequest);
    expect(data.choices[0]?.message.content).toBe(golden.expectedOpenAi.content);
    expect(data.choices[0]?.finish_reason).toBe(golden.expectedOpenAi.finishReason);
    expect(data.usage).toMatchObject(golden.expectedOpenAi.usage);
    const log = await billed(response.headers.get('x-request-id'));
    expect([log.promptTokens, log.completionTokens]).toEqual([11, 9]);
  });

  it("decodes the fixture's CRLF-framed stream for an OpenAI client, with the usage of its last event", async () => {
    let content = '';
    let finish: string | null | undefined;
    let usage: unknown;
    for await (const chunk of await openAiClient().chat.completions.create({
      ...request(),
      stream: true,
      stream_options: { include_usage: true },
    })) {
      content += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      usage ??= chunk.usage ?? undefined;
    }
    const sent = clouds.requests.at(-1)!;
    expect(`${sent.path}?${sent.query}`).toBe(`${golden.upstreamPath}:streamGenerateContent?alt=sse`);
    expect(sent.body).toEqual(golden.upstreamRequest);
    expect({ content, finish, usage }).toEqual({
      content: golden.expectedOpenAi.content,
      finish: golden.expectedOpenAi.finishReason,
      usage: expect.objectContaining(golden.expectedOpenAi.usage),
    });
  });

  it("answers an Anthropic client with the fixture's output, and passes a Gemini client's answer unread", async () => {
    const { messages } = golden.clientRequest;
    const message = await anthropicClient().messages.create({
      model: golden.model,
      max_tokens: golden.clientRequest.max_tokens,
      system: messages[0]!.content,
      messages: [{ role: 'user', content: messages[1]!.content }],
    });
    expect(message).toMatchObject(golden.expectedAnthropic);
    const answer = await geminiClient().models.generateContent({
      model: golden.model,
      contents: messages[1]!.content,
    });
    expect(answer.candidates?.[0]?.content?.parts?.[0]?.text).toBe(golden.expectedOpenAi.content);
    expect(answer.usageMetadata).toMatchObject(golden.upstreamAnswer.usageMetadata);
  });
});

describe('Azure OpenAI Responses (3)', () => {
  it('serves the Responses API at /openai/responses with the deployment as the model and a version that has it', async () => {
    const { data, response } = await openAiClient()
      .responses.create({ model: 'gpt-4o-mini', input: 'Say hello.' })
      .withResponse();
    expect(data.output_text).toBe(DEFAULT_FAKE_BEHAVIOUR.reply);
    const sent = clouds.requests.at(-1)!;
    expect(sent.path).toBe('/openai/responses');
    expect(sent.query.get('api-version')).toBe('2025-04-01-preview');
    expect(sent.headers['api-key']).toBe(AZURE_KEY);
    expect(sent.body.model).toBe('gpt-4o-mini');
    const log = await billed(response.headers.get('x-request-id'));
    expect(log.completionTokens).toBeGreaterThan(0);
  });

  it('streams Responses events to an OpenAI client, ending with response.completed and its usage', async () => {
    const types: string[] = [];
    let text = '';
    let usage: unknown;
    const stream = await openAiClient().responses.create({
      model: 'gpt-4o-mini',
      input: 'Say hello.',
      stream: true,
    });
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'response.output_text.delta') text += event.delta;
      if (event.type === 'response.completed') usage = event.response.usage;
    }
    expect(text).toBe(DEFAULT_FAKE_BEHAVIOUR.reply);
    expect(types.at(-1)).toBe('response.completed');
    expect(usage).toMatchObject({ input_tokens: expect.any(Number), output_tokens: expect.any(Number) });
    expect(clouds.requests.at(-1)?.body.stream).toBe(true);
  });
});
