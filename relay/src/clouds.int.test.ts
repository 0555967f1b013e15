/**
 * The cloud providers (docs/adr/0024): Azure OpenAI and Vertex AI behind fake front doors that check the
 * credential as the provider does (testing/fake-clouds.ts) before the fake model upstreams. OpenAI, Anthropic and
 * Gemini clients all reach each; usage is billed (the consume log's quota is what the user lost); errors come back
 * in the caller's protocol and are classified per provider (retried, left to the caller, or disabling).
 */
import { generateKeyPairSync } from 'node:crypto';
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import { createChannelKeyBox } from '@turnpike/core/channels/channel-key';
import { fetchUpstreamModels } from '@turnpike/core/channels/upstream';
import { channels, logs, users } from '@turnpike/core/db/schema/index';
import { eq } from 'drizzle-orm';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runChannelTest } from './health/channel-tester.ts';
import { toRelayChannel } from './state/channel-cache.ts';
import {
  COHERE_REPLY,
  CONVERSE_REPLY,
  DIFY_REPLY,
  type FakeClouds,
  startFakeClouds,
  WENXIN_REPLY,
} from './testing/fake-clouds.ts';
import { DEFAULT_FAKE_BEHAVIOUR, type FakeOpenAi, startFakeOpenAi } from './testing/fake-openai.ts';
import {
  DEFAULT_PROVIDER_BEHAVIOUR,
  type FakeProviders,
  startFakeProviders,
} from './testing/fake-providers.ts';
import { createRelayTestApp, type RelayTestApp } from './testing/relay-test-app.ts';
import { waitFor } from './testing/wait.ts';
import { createUpstreamClient } from './upstream/client.ts';

const STARTING_QUOTA = 50_000_000;
const AWS = {
  accessKeyId: 'AKIAIOSFODNN7EXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
  region: 'us-west-2',
};
const BEDROCK_API_KEY = 'ABSKQmVkcm9ja0FQSUtleS1leGFtcGxlLWF0LTEyMzQ1Njc4OTAxMg==';
/** The OpenAI-compatible hosts: type, the path prefix their reference documents, a key, whether they embed. */
const COMPATIBLE = [
  {
    type: 26,
    name: 'Zhipu GLM-4',
    prefix: '/api/paas/v4',
    key: 'a1b2c3d4e5f6.Zx9Yw8Vu7Ts6Rq5P',
    embeds: true,
  },
  {
    type: 17,
    name: 'Qwen',
    prefix: '/compatible-mode/v1',
    key: 'sk-dashscope-0123456789abcdef',
    embeds: true,
  },
  { type: 45, name: 'Doubao', prefix: '/api/v3', key: 'ark-0123456789abcdef-xyz', embeds: true },
  { type: 46, name: 'Qianfan V2', prefix: '/v2', key: 'bce-v3/ALTAK-abcdef/0123456789abcdef', embeds: true },
  {
    type: 39,
    name: 'Cloudflare',
    prefix: '/client/v4/accounts/acct-42/ai/v1',
    key: 'cf-token-0123456789abcdef',
    embeds: true,
    other: 'acct-42',
  },
  { type: 35, name: 'MiniMax', prefix: '/v1/text', key: 'minimax-key-0123456789abcdef', embeds: false },
  { type: 23, name: 'Hunyuan', prefix: '/v1', key: 'sk-hunyuan-0123456789abcdef', embeds: true },
  {
    type: 22,
    name: 'FastGPT',
    prefix: '/api/fastgpt/v1',
    key: 'fastgpt-0123456789abcdef',
    embeds: false,
    base: '/api/fastgpt',
  },
] as const;
const ZHIPU_LEGACY_KEY = '8f3c2a9d4b1e4c7a.QmVkcm9ja0FQSUtleS1leGFt';
const DIFY_KEY = 'app-0123456789abcdefABCDEF';
const COHERE_KEY = 'co-0123456789abcdefghijABCDEFGHIJ';
const BAIDU_KEY = 'Q9mE2rS7tV4wX1yZ6aB3cD8e|F5gH0iJ2kL7mN4oP9qR1sT6uV3wX8y';
const JINA_KEY = 'jina_0123456789abcdef0123456789abcdef';
const AZURE_KEY = '3f9c2a7be01d4c5f8a6b9e2d7c1f0a4b';

const keyPair = () =>
  generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
const vertexKeys = keyPair();
const VERTEX_EMAIL = 'relay@turnpike-test.iam.gserviceaccount.com';

let t: RelayTestApp;
let fake: FakeOpenAi;
let jinaHost: FakeOpenAi;
let inner: FakeProviders;
let clouds: FakeClouds;
let address: string;
let key: string;
let userId: number;
let azureId: number;
let vertexId: number;
let refusedId: number;
let bedrockId: number;
let deniedId: number;
let badSignatureId: number;

const serviceAccount = (privateKey: string) =>
  JSON.stringify({
    type: 'service_account',
    project_id: 'turnpike-test',
    private_key_id: 'k1',
    private_key: privateKey,
    client_email: VERTEX_EMAIL,
    token_uri: `${clouds.url}/token`,
  });

const consumeLog = (requestId: string) =>
  waitFor(async () => (await t.runtime.deps.db.select().from(logs).where(eq(logs.requestId, requestId)))[0]);
const quotaOf = async () =>
  (await t.runtime.deps.db.select().from(users).where(eq(users.id, userId)))[0]!.quota;
/**
 * The consume log of a call, with a quota; and the books balance: what the user has plus every consume log of the
 * user's is what they started with (once the writer flushed).
 */
async function billed(requestId: string | null) {
  const log = await consumeLog(requestId ?? '');
  expect(log.quota).toBeGreaterThan(0);
  await waitFor(async () => {
    const spent = (await t.runtime.deps.db.select().from(logs).where(eq(logs.userId, userId))).reduce(
      (sum, row) => sum + row.quota,
      0,
    );
    return (await quotaOf()) + spent === STARTING_QUOTA ? true : undefined;
  });
  return log;
}

beforeAll(async () => {
  fake = await startFakeOpenAi();
  jinaHost = await startFakeOpenAi({ apiKey: JINA_KEY });
  inner = await startFakeProviders({ apiKey: undefined });
  clouds = await startFakeClouds({
    openAiUrl: fake.url,
    providersUrl: inner.url,
    azureKey: AZURE_KEY,
    vertexAccount: { email: VERTEX_EMAIL, publicKeyPem: vertexKeys.publicKey },
    aws: { ...AWS, apiKey: BEDROCK_API_KEY },
    zhipuKey: ZHIPU_LEGACY_KEY,
    difyKey: DIFY_KEY,
    cohereKey: COHERE_KEY,
    baiduKey: BAIDU_KEY,
    compatible: COMPATIBLE.map(({ prefix, key: hostKey }) => ({ prefix, key: hostKey })),
  });
  t = await createRelayTestApp();
  await t.runtime.deps.options.set(
    'ModelRatio',
    JSON.stringify({
      'gpt-3.5-turbo': 1,
      'text-embedding-3-small': 0.1,
      'gemini-test': 1,
      'claude-3-5-haiku-20241022': 1,
      'gemini-refused': 1,
      'claude-3-haiku-20240307': 1,
      'claude-3-opus-20240229': 1,
      'claude-bedrock-us': 1,
      'claude-both': 1,
      'claude-denied': 1,
      'claude-badsig': 1,
      'llama-bedrock': 1,
      'nova-bedrock': 1,
      'jina-embeddings-v3': 0.1,
      'jina-reranker-v2-base-multilingual': 0.5,
      'm3e-base': 0.1,
      'glm-4-flash': 1,
      dify: 1,
      'command-r-plus': 1,
      'ERNIE-4.0-8K': 1,
      'embed-english-v3.0': 0.1,
      'rerank-english-v3.0': 0.5,
      ...Object.fromEntries(
        COMPATIBLE.flatMap((host) => [
          [`chat-${host.type}`, 1],
          [`embed-${host.type}`, 0.1],
        ]),
      ),
    }),
  );
  azureId = (
    await t.seedChannel({
      type: 3,
      key: AZURE_KEY,
      baseUrl: clouds.url,
      models: 'gpt-3.5-turbo,text-embedding-3-small',
    })
  ).id;
  vertexId = (
    await t.seedChannel({
      type: 41,
      key: serviceAccount(vertexKeys.privateKey),
      baseUrl: clouds.url,
      other: JSON.stringify({ default: 'us-central1', 'claude-3-5-haiku-20241022': 'us-east5' }),
      models: 'gemini-test,claude-3-5-haiku-20241022',
    })
  ).id;
  refusedId = (
    await t.seedChannel({
      type: 41,
      key: serviceAccount(keyPair().privateKey),
      baseUrl: clouds.url,
      other: 'us-central1',
      models: 'gemini-refused',
      name: 'refused vertex',
    })
  ).id;
  const sigv4 = `${AWS.accessKeyId}|${AWS.secretAccessKey}|${AWS.region}`;
  bedrockId = (
    await t.seedChannel({
      type: 33,
      key: sigv4,
      baseUrl: clouds.url,
      models: 'claude-3-haiku-20240307,claude-bedrock-us,claude-both,llama-bedrock,nova-bedrock',
      modelMapping: {
        'claude-bedrock-us': 'us.anthropic.claude-3-5-haiku-20241022-v1:0',
        'llama-bedrock': 'meta.llama3-1-70b-instruct-v1:0',
        'nova-bedrock': 'us.amazon.nova-pro-v1:0',
      },
    })
  ).id;
  await t.seedChannel({
    type: 33,
    key: `${BEDROCK_API_KEY}|${AWS.region}`,
    baseUrl: clouds.url,
    models: 'claude-3-opus-20240229,claude-both',
  });
  deniedId = (await t.seedChannel({ type: 33, key: sigv4, baseUrl: clouds.url, models: 'claude-denied' })).id;
  badSignatureId = (
    await t.seedChannel({
      type: 33,
      key: `${AWS.accessKeyId}|not-the-secret|${AWS.region}`,
      baseUrl: clouds.url,
      models: 'claude-badsig',
    })
  ).id;
  for (const host of COMPATIBLE)
    await t.seedChannel({
      type: host.type,
      key: host.key,
      baseUrl: `${clouds.url}${'base' in host ? host.base : ''}`,
      other: 'other' in host ? host.other : '',
      models: `chat-${host.type},embed-${host.type}`,
    });
  await t.seedChannel({
    type: 38,
    key: JINA_KEY,
    baseUrl: jinaHost.url,
    models: 'jina-embeddings-v3,jina-reranker-v2-base-multilingual',
  });
  await t.seedChannel({ type: 44, key: 'm3e-key', baseUrl: fake.url, models: 'm3e-base' });
  await t.seedChannel({
    type: 34,
    key: COHERE_KEY,
    baseUrl: `${clouds.url}/cohere`,
    models: 'command-r-plus,embed-english-v3.0,rerank-english-v3.0',
  });
  await t.seedChannel({ type: 15, key: BAIDU_KEY, baseUrl: `${clouds.url}/baidu`, models: 'ERNIE-4.0-8K' });
  await t.seedChannel({ type: 37, key: DIFY_KEY, baseUrl: `${clouds.url}/dify`, models: 'dify' });
  await t.seedChannel({
    type: 16,
    key: ZHIPU_LEGACY_KEY,
    baseUrl: `${clouds.url}/zhipu-jwt`,
    models: 'glm-4-flash',
  });
  await t.runtime.deps.options.set('AutomaticDisableChannelEnabled', 'true');
  const relay = await t.startRelay();
  address = await relay.listen({ port: 0, host: '127.0.0.1' });
  const user = await t.seedUser({ quota: STARTING_QUOTA });
  userId = user.id;
  key = `sk-${(await t.seedToken(user.id)).key}`;
});

afterAll(async () => {
  await t?.close();
  await Promise.all([fake?.close(), jinaHost?.close(), inner?.close(), clouds?.close()]);
});

const anthropicClient = () => new Anthropic({ apiKey: key, baseURL: address, maxRetries: 0 });
const openAiClient = () => new OpenAI({ apiKey: key, baseURL: `${address}/v1`, maxRetries: 0 });
const geminiClient = () => new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: address } });

describe('Azure OpenAI (3)', () => {
  it('serves an OpenAI client from the deployment named after the model, with the api-key header, billed', async () => {
    const { data, response } = await openAiClient()
      .chat.completions.create({ model: 'gpt-3.5-turbo', messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    expect(data.choices[0]?.message.content).toBe(DEFAULT_FAKE_BEHAVIOUR.reply);
    const sent = clouds.requests.at(-1)!;
    expect(sent.path).toBe('/openai/deployments/gpt-35-turbo/chat/completions');
    expect(sent.query.get('api-version')).toBe('2024-10-21');
    expect(sent.headers['api-key']).toBe(AZURE_KEY);
    expect(sent.headers.authorization).toBeUndefined();
    await billed(response.headers.get('x-request-id'));
  });

  it('streams to an OpenAI client with the usage chunk, and serves embeddings', async () => {
    const { data: stream, response } = await openAiClient()
      .chat.completions.create({
        model: 'gpt-3.5-turbo',
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: 'user', content: 'hi' }],
      })
      .withResponse();
    let text = '';
    let usage: unknown;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      usage ??= chunk.usage ?? undefined;
    }
    expect(text).toBe(DEFAULT_FAKE_BEHAVIOUR.reply);
    expect(usage).toMatchObject({ prompt_tokens: expect.any(Number) });
    const log = await consumeLog(response.headers.get('x-request-id') ?? '');
    expect(log.quota).toBeGreaterThan(0);
    const embedded = await openAiClient().embeddings.create({
      model: 'text-embedding-3-small',
      input: 'hello',
    });
    expect(embedded.data[0]?.embedding.length).toBeGreaterThan(0);
    expect(clouds.requests.at(-1)?.path).toBe('/openai/deployments/text-embedding-3-small/embeddings');
    await billed(response.headers.get('x-request-id'));
  });

  it('serves Anthropic and Gemini clients through the canonical shape', async () => {
    const message = await anthropicClient().messages.create({
      model: 'gpt-3.5-turbo',
      max_tokens: 50,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(message.content[0]).toMatchObject({ type: 'text', text: DEFAULT_FAKE_BEHAVIOUR.reply });
    const answer = await geminiClient().models.generateContent({ model: 'gpt-3.5-turbo', contents: 'hi' });
    expect(answer.text).toBe(DEFAULT_FAKE_BEHAVIOUR.reply);
    expect(clouds.requests.at(-1)?.path).toBe('/openai/deployments/gpt-35-turbo/chat/completions');
  });

  it("answers a content-filter refusal as the caller's 400 with the filter result, never against the channel", async () => {
    const count = clouds.requests.length;
    const refused = await openAiClient()
      .chat.completions.create({ model: 'gpt-3.5-turbo', messages: [{ role: 'user', content: 'FILTER-ME' }] })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    const error = refused as InstanceType<typeof OpenAI.BadRequestError>;
    expect(error.code).toBe('content_filter');
    expect(error.message).toMatch(/violence \(high\)/);
    expect(clouds.requests.length).toBe(count + 1);
    const [row] = await t.runtime.deps.db.select().from(channels).where(eq(channels.id, azureId));
    expect(row?.status).toBe(1);
  });

  it("rests the channel for Azure's 429 retry-after when cool-downs are on", async () => {
    const options = t.runtime.deps.options;
    await options.set('ChannelCooldownEnabled', 'true');
    clouds.setFault({ status: 429, retryAfter: '30' });
    try {
      const limited = await openAiClient()
        .chat.completions.create({ model: 'gpt-3.5-turbo', messages: [{ role: 'user', content: 'hi' }] })
        .catch((error: unknown) => error);
      expect((limited as InstanceType<typeof OpenAI.APIError>).status).toBe(429);
      clouds.setFault(undefined);
      const count = clouds.requests.length;
      // One 429 (not three, as the cool-down policy would need) and the channel rests: nothing else serves it.
      const resting = await openAiClient()
        .chat.completions.create({ model: 'gpt-3.5-turbo', messages: [{ role: 'user', content: 'hi' }] })
        .catch((error: unknown) => error);
      expect((resting as InstanceType<typeof OpenAI.APIError>).status).toBe(503);
      expect(clouds.requests.length).toBe(count);
    } finally {
      clouds.setFault(undefined);
      await options.set('ChannelCooldownEnabled', 'false');
    }
  });

  it("fetches an Azure resource's models with the api-key header", async () => {
    expect(await fetchUpstreamModels(3, clouds.url, AZURE_KEY)).toEqual(['gpt-4o', 'text-embedding-3-small']);
    expect(clouds.requests.at(-1)?.query.get('api-version')).toBe('2024-10-21');
  });

  it('tests an Azure channel from the console', async () => {
    const upstream = createUpstreamClient();
    try {
      const [row] = await t.runtime.deps.db.select().from(channels).where(eq(channels.id, azureId));
      const channel = toRelayChannel(row!, createChannelKeyBox(t.runtime.deps.config.cryptoSecret));
      const result = await runChannelTest(upstream, channel, 'gpt-3.5-turbo', {
        settings: t.runtime.deps.options,
      });
      expect(result.ok).toBe(true);
    } finally {
      await upstream.close();
    }
  });
});

describe('Vertex AI (41)', () => {
  it("serves a Gemini client from Google's publisher with an exchanged access token, billed", async () => {
    const response = await fetch(`${address}/v1beta/models/gemini-test:generateContent`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-goog-api-key': key },
      body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hello' }] }] }),
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { candidates: { content: { parts: { text: string }[] } }[] };
    expect(body.candidates[0]?.content.parts[0]?.text).toBe(DEFAULT_PROVIDER_BEHAVIOUR.reply);
    const sent = clouds.requests.at(-1)!;
    expect(sent.path).toBe(
      '/v1/projects/turnpike-test/locations/us-central1/publishers/google/models/gemini-test:generateContent',
    );
    expect(sent.headers.authorization).toMatch(/^Bearer ya29\./);
    await billed(response.headers.get('x-request-id'));
  });

  it('streams to an OpenAI client, and to an Anthropic client, converted from Gemini', async () => {
    const stream = await openAiClient().chat.completions.create({
      model: 'gemini-test',
      stream: true,
      messages: [{ role: 'user', content: 'hi' }],
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe(DEFAULT_PROVIDER_BEHAVIOUR.reply);
    expect(clouds.requests.at(-1)?.path).toMatch(/gemini-test:streamGenerateContent$/);
    expect(clouds.requests.at(-1)?.query.get('alt')).toBe('sse');
    const message = await anthropicClient().messages.create({
      model: 'gemini-test',
      max_tokens: 50,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(message.content[0]).toMatchObject({ type: 'text', text: DEFAULT_PROVIDER_BEHAVIOUR.reply });
  });

  it("passes an Anthropic client's request to Claude's publisher with Vertex's version and the model in the path", async () => {
    const { data, response } = await anthropicClient()
      .messages.create({
        model: 'claude-3-5-haiku-20241022',
        max_tokens: 50,
        messages: [{ role: 'user', content: 'hi' }],
      })
      .withResponse();
    expect(data.content[0]).toMatchObject({ type: 'text', text: DEFAULT_PROVIDER_BEHAVIOUR.reply });
    const sent = clouds.requests.at(-1)!;
    expect(sent.path).toBe(
      '/v1/projects/turnpike-test/locations/us-east5/publishers/anthropic/models/claude-3-5-haiku@20241022:rawPredict',
    );
    expect(sent.body).toMatchObject({ anthropic_version: 'vertex-2023-10-16' });
    expect(sent.body).not.toHaveProperty('model');
    await billed(response.headers.get('x-request-id'));
    const stream = anthropicClient().messages.stream({
      model: 'claude-3-5-haiku-20241022',
      max_tokens: 50,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(await stream.finalText()).toBe(DEFAULT_PROVIDER_BEHAVIOUR.reply);
    expect(clouds.requests.at(-1)?.path).toMatch(/claude-3-5-haiku@20241022:streamRawPredict$/);
  });

  it('serves OpenAI and Gemini clients from Claude on Vertex, converted', async () => {
    const answer = await openAiClient().chat.completions.create({
      model: 'claude-3-5-haiku-20241022',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(answer.choices[0]?.message.content).toBe(DEFAULT_PROVIDER_BEHAVIOUR.reply);
    const gemini = await geminiClient().models.generateContent({
      model: 'claude-3-5-haiku-20241022',
      contents: 'hi',
    });
    expect(gemini.text).toBe(DEFAULT_PROVIDER_BEHAVIOUR.reply);
  });

  it('exchanges the service account once for every call so far, concurrent ones included', async () => {
    const calls = Array.from({ length: 6 }, () =>
      openAiClient().chat.completions.create({
        model: 'gemini-test',
        messages: [{ role: 'user', content: 'hi' }],
      }),
    );
    await Promise.all(calls);
    expect(clouds.tokensIssued()).toBe(1);
  });

  it('disables a channel whose service account the token endpoint refuses', async () => {
    const refused = await openAiClient()
      .chat.completions.create({ model: 'gemini-refused', messages: [{ role: 'user', content: 'hi' }] })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.APIError);
    expect((refused as InstanceType<typeof OpenAI.APIError>).message).toMatch(/invalid JWT signature/);
    await waitFor(async () => {
      const [row] = await t.runtime.deps.db.select().from(channels).where(eq(channels.id, refusedId));
      return row?.status === 3 ? row : undefined;
    });
  });

  it('tests a Vertex channel from the console', async () => {
    const upstream = createUpstreamClient();
    try {
      const [row] = await t.runtime.deps.db.select().from(channels).where(eq(channels.id, vertexId));
      const channel = toRelayChannel(row!, createChannelKeyBox(t.runtime.deps.config.cryptoSecret));
      for (const model of ['gemini-test', 'claude-3-5-haiku-20241022']) {
        const result = await runChannelTest(upstream, channel, model, { settings: t.runtime.deps.options });
        expect(result.ok, model).toBe(true);
      }
    } finally {
      await upstream.close();
    }
  });
});

const statusOf = async (id: number) =>
  (await t.runtime.deps.db.select().from(channels).where(eq(channels.id, id)))[0]?.status;

describe('AWS Bedrock (33)', () => {
  it("passes an Anthropic client's request to InvokeModel, SigV4-signed, in Bedrock's Claude shape, billed", async () => {
    const { data, response } = await anthropicClient()
      .messages.create(
        { model: 'claude-3-haiku-20240307', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] },
        { headers: { 'anthropic-beta': 'token-efficient-tools-2025-02-19' } },
      )
      .withResponse();
    expect(data.content[0]).toMatchObject({ type: 'text', text: DEFAULT_PROVIDER_BEHAVIOUR.reply });
    const sent = clouds.requests.at(-1)!;
    expect(sent.path).toBe('/model/anthropic.claude-3-haiku-20240307-v1%3A0/invoke');
    expect(sent.headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE\/\d{8}\/us-west-2\/bedrock\/aws4_request, SignedHeaders=/,
    );
    expect(sent.body).toMatchObject({
      anthropic_version: 'bedrock-2023-05-31',
      anthropic_beta: ['token-efficient-tools-2025-02-19'],
      max_tokens: 50,
    });
    expect(sent.body).not.toHaveProperty('model');
    await billed(response.headers.get('x-request-id'));
  });

  it("streams from invoke-with-response-stream's binary event stream to Anthropic, OpenAI and Gemini clients", async () => {
    const stream = anthropicClient().messages.stream({
      model: 'claude-3-haiku-20240307',
      max_tokens: 50,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(await stream.finalText()).toBe(DEFAULT_PROVIDER_BEHAVIOUR.reply);
    expect((await stream.finalMessage()).usage.output_tokens).toBeGreaterThan(0);
    expect(clouds.requests.at(-1)?.path).toBe(
      '/model/anthropic.claude-3-haiku-20240307-v1%3A0/invoke-with-response-stream',
    );
    const { data: chunks, response } = await openAiClient()
      .chat.completions.create({
        model: 'claude-3-haiku-20240307',
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: 'user', content: 'hi' }],
      })
      .withResponse();
    let text = '';
    for await (const chunk of chunks) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe(DEFAULT_PROVIDER_BEHAVIOUR.reply);
    await billed(response.headers.get('x-request-id'));
    let gemini = '';
    for await (const chunk of await geminiClient().models.generateContentStream({
      model: 'claude-3-haiku-20240307',
      contents: 'hi',
    }))
      gemini += chunk.text ?? '';
    expect(gemini).toBe(DEFAULT_PROVIDER_BEHAVIOUR.reply);
  });

  it('sends a cross-region inference profile as it is, and a Bedrock API key as a bearer', async () => {
    await openAiClient().chat.completions.create({
      model: 'claude-bedrock-us',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(clouds.requests.at(-1)?.path).toBe('/model/us.anthropic.claude-3-5-haiku-20241022-v1%3A0/invoke');
    const answer = await openAiClient().chat.completions.create({
      model: 'claude-3-opus-20240229',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(answer.choices[0]?.message.content).toBe(DEFAULT_PROVIDER_BEHAVIOUR.reply);
    expect(clouds.requests.at(-1)?.headers.authorization).toBe(`Bearer ${BEDROCK_API_KEY}`);
  });

  it("retries a ThrottlingException on another channel and answers it in the caller's protocol", async () => {
    clouds.setFault({ status: 429, awsType: 'ThrottlingException' });
    await t.runtime.deps.options.set('RetryTimes', '1');
    try {
      const count = clouds.requests.length;
      const refused = await anthropicClient()
        .messages.create({
          model: 'claude-both',
          max_tokens: 10,
          messages: [{ role: 'user', content: 'hi' }],
        })
        .catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(Anthropic.RateLimitError);
      expect((refused as InstanceType<typeof Anthropic.RateLimitError>).error).toMatchObject({
        type: 'error',
        // A 429 left after every channel was tried is told as the group's saturation (errors.ts).
        error: {
          type: 'rate_limit_error',
          message: expect.stringMatching(/saturated/),
        },
      });
      expect(clouds.requests.length - count).toBe(2);
      expect(await statusOf(bedrockId)).toBe(1);
    } finally {
      await t.runtime.deps.options.set('RetryTimes', '0');
      clouds.setFault(undefined);
    }
  });

  it('disables a channel on AccessDeniedException and on a signature Bedrock refuses', async () => {
    clouds.setFault({ status: 403, awsType: 'AccessDeniedException' });
    try {
      const denied = await openAiClient()
        .chat.completions.create({ model: 'claude-denied', messages: [{ role: 'user', content: 'hi' }] })
        .catch((error: unknown) => error);
      expect((denied as InstanceType<typeof OpenAI.APIError>).status).toBe(403);
    } finally {
      clouds.setFault(undefined);
    }
    await waitFor(async () => ((await statusOf(deniedId)) === 3 ? true : undefined));
    const badSignature = await openAiClient()
      .chat.completions.create({ model: 'claude-badsig', messages: [{ role: 'user', content: 'hi' }] })
      .catch((error: unknown) => error);
    expect((badSignature as InstanceType<typeof OpenAI.APIError>).message).toMatch(
      /InvalidSignatureException/,
    );
    await waitFor(async () => ((await statusOf(badSignatureId)) === 3 ? true : undefined));
  });

  it('serves other models through Converse and ConverseStream to OpenAI, Anthropic and Gemini clients, billed', async () => {
    const { data, response } = await openAiClient()
      .chat.completions.create({
        model: 'llama-bedrock',
        max_tokens: 64,
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'hi' },
        ],
      })
      .withResponse();
    expect(data.choices[0]?.message.content).toBe(CONVERSE_REPLY);
    expect(data.usage?.completion_tokens).toBe(7);
    const sent = clouds.requests.at(-1)!;
    expect(sent.path).toBe('/model/meta.llama3-1-70b-instruct-v1%3A0/converse');
    expect(sent.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 /);
    expect(sent.body).toEqual({
      messages: [{ role: 'user', content: [{ text: 'hi' }] }],
      system: [{ text: 'Be brief.' }],
      inferenceConfig: { maxTokens: 64 },
    });
    await billed(response.headers.get('x-request-id'));
    const stream = anthropicClient().messages.stream({
      model: 'nova-bedrock',
      max_tokens: 50,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(await stream.finalText()).toBe(CONVERSE_REPLY);
    expect((await stream.finalMessage()).usage.output_tokens).toBe(7);
    expect(clouds.requests.at(-1)?.path).toBe('/model/us.amazon.nova-pro-v1%3A0/converse-stream');
    const gemini = await geminiClient().models.generateContent({ model: 'nova-bedrock', contents: 'hi' });
    expect(gemini.text).toBe(CONVERSE_REPLY);
  });

  it('tests a Bedrock channel from the console', async () => {
    const upstream = createUpstreamClient();
    try {
      const [row] = await t.runtime.deps.db.select().from(channels).where(eq(channels.id, bedrockId));
      const channel = toRelayChannel(row!, createChannelKeyBox(t.runtime.deps.config.cryptoSecret));
      const result = await runChannelTest(upstream, channel, 'claude-3-haiku-20240307', {
        settings: t.runtime.deps.options,
      });
      expect(result.ok).toBe(true);
    } finally {
      await upstream.close();
    }
  });
});

describe('OpenAI-compatible hosts with paths of their own', () => {
  it.each(COMPATIBLE)(
    '$name ($type): OpenAI, Anthropic and Gemini clients reach its documented path with its key, billed',
    async (host) => {
      const { data, response } = await openAiClient()
        .chat.completions.create({ model: `chat-${host.type}`, messages: [{ role: 'user', content: 'hi' }] })
        .withResponse();
      expect(data.choices[0]?.message.content).toBe(DEFAULT_FAKE_BEHAVIOUR.reply);
      const sent = clouds.requests.at(-1)!;
      const chatPath = host.type === 35 ? '/text/chatcompletion_v2' : '/chat/completions';
      expect(sent.path).toBe(`${host.prefix.replace(/\/text$/, '')}${chatPath}`);
      expect(sent.headers.authorization).toBe(`Bearer ${host.key}`);
      await billed(response.headers.get('x-request-id'));
      const message = await anthropicClient().messages.create({
        model: `chat-${host.type}`,
        max_tokens: 20,
        messages: [{ role: 'user', content: 'hi' }],
      });
      expect(message.content[0]).toMatchObject({ type: 'text', text: DEFAULT_FAKE_BEHAVIOUR.reply });
      let streamed = '';
      for await (const chunk of await geminiClient().models.generateContentStream({
        model: `chat-${host.type}`,
        contents: 'hi',
      }))
        streamed += chunk.text ?? '';
      expect(streamed).toBe(DEFAULT_FAKE_BEHAVIOUR.reply);
      const embedded = await openAiClient()
        .embeddings.create({ model: `embed-${host.type}`, input: 'hello' })
        .catch((error: unknown) => error);
      if (host.embeds) {
        expect((embedded as { data: unknown[] }).data).toHaveLength(1);
        expect(clouds.requests.at(-1)?.path).toBe(`${host.prefix}/embeddings`);
      } else {
        // MiniMax and FastGPT carry chat only: no channel serves their embeddings.
        expect((embedded as InstanceType<typeof OpenAI.APIError>).status).toBe(503);
      }
    },
  );
});

describe('Jina (38) and M3E (44)', () => {
  it('serve embeddings, and Jina rerank, with the key as a bearer; chat is not carried', async () => {
    const embedded = await openAiClient().embeddings.create({
      model: 'jina-embeddings-v3',
      input: ['a', 'b'],
    });
    expect(embedded.data).toHaveLength(2);
    expect(jinaHost.requests.at(-1)?.headers.authorization).toBe(`Bearer ${JINA_KEY}`);
    const response = await fetch(`${address}/v1/rerank`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'jina-reranker-v2-base-multilingual',
        query: 'q',
        documents: ['x', 'y'],
      }),
    });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { results: unknown[] }).results.length).toBeGreaterThan(0);
    await billed(response.headers.get('x-request-id'));
    expect((await openAiClient().embeddings.create({ model: 'm3e-base', input: 'a' })).data).toHaveLength(1);
    const chat = await openAiClient()
      .chat.completions.create({ model: 'jina-embeddings-v3', messages: [{ role: 'user', content: 'hi' }] })
      .catch((error: unknown) => error);
    expect((chat as InstanceType<typeof OpenAI.APIError>).status).toBe(503);
  });
});

describe('Zhipu with its legacy id.secret key (16)', () => {
  it('signs the key into the HS256 JWT the v4 API checks, reused while it lasts', async () => {
    for (let i = 0; i < 2; i += 1) {
      const answer = await openAiClient().chat.completions.create({
        model: 'glm-4-flash',
        messages: [{ role: 'user', content: 'hi' }],
      });
      expect(answer.choices[0]?.message.content).toBe(DEFAULT_FAKE_BEHAVIOUR.reply);
    }
    const [first, second] = clouds.requests.filter((r) => r.path.startsWith('/zhipu-jwt/')).slice(-2);
    expect(first?.path).toBe('/zhipu-jwt/api/paas/v4/chat/completions');
    expect(first?.headers.authorization).toMatch(/^Bearer [\w-]+\.[\w-]+\.[\w-]+$/);
    expect(second?.headers.authorization).toBe(first?.headers.authorization);
    expect(first?.headers.authorization).not.toContain(ZHIPU_LEGACY_KEY.split('.')[1]);
  });
});

describe('Dify (37)', () => {
  it("sends the conversation as one query to the app's chat-messages, blocking, and bills message_end's usage", async () => {
    const { data, response } = await openAiClient()
      .chat.completions.create({
        model: 'dify',
        user: 'alice',
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'hi' },
        ],
      })
      .withResponse();
    expect(data.choices[0]?.message.content).toBe(DIFY_REPLY);
    const sent = clouds.requests.at(-1)!;
    expect(sent.path).toBe('/dify/v1/chat-messages');
    expect(sent.headers.authorization).toBe(`Bearer ${DIFY_KEY}`);
    expect(sent.body).toEqual({
      inputs: {},
      query: 'SYSTEM: \nBe brief.\nUSER: \nhi',
      response_mode: 'blocking',
      conversation_id: '',
      user: 'alice',
    });
    const log = await billed(response.headers.get('x-request-id'));
    expect(log.completionTokens).toBe(6);
  });

  it('streams message events to OpenAI and Anthropic clients, the agent thought as reasoning, usage from message_end', async () => {
    const { data: stream, response } = await openAiClient()
      .chat.completions.create({
        model: 'dify',
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: 'user', content: 'hi' }],
      })
      .withResponse();
    let text = '';
    let reasoning = '';
    let usage: unknown;
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta as { content?: string; reasoning_content?: string } | undefined;
      text += delta?.content ?? '';
      reasoning += delta?.reasoning_content ?? '';
      usage ??= chunk.usage ?? undefined;
    }
    expect(text).toBe(DIFY_REPLY);
    expect(reasoning).toBe('Answering directly.');
    expect(usage).toMatchObject({ completion_tokens: 6 });
    expect(clouds.requests.at(-1)?.body).toMatchObject({
      query: 'hi',
      response_mode: 'streaming',
      user: 'turnpike',
    });
    await billed(response.headers.get('x-request-id'));
    const message = await anthropicClient()
      .messages.stream({ model: 'dify', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] })
      .finalText();
    expect(message).toBe(DIFY_REPLY);
  });
});

describe('Cohere (34)', () => {
  const weather = {
    type: 'function' as const,
    function: {
      name: 'get_weather',
      parameters: { type: 'object', properties: { city: { type: 'string' } } },
    },
  };

  it("chats through v2 chat in Cohere's shape, tool calls included, billed by the tokens used", async () => {
    const { data, response } = await openAiClient()
      .chat.completions.create({
        model: 'command-r-plus',
        top_p: 0.5,
        messages: [{ role: 'user', content: 'hi' }],
      })
      .withResponse();
    expect(data.choices[0]?.message.content).toBe(COHERE_REPLY);
    const sent = clouds.requests.at(-1)!;
    expect(sent.path).toBe('/cohere/v2/chat');
    expect(sent.headers.authorization).toBe(`Bearer ${COHERE_KEY}`);
    expect(sent.body).toMatchObject({ model: 'command-r-plus', p: 0.5, stream: false });
    const log = await billed(response.headers.get('x-request-id'));
    expect(log.completionTokens).toBe(5);
    const called = await openAiClient().chat.completions.create({
      model: 'command-r-plus',
      tools: [weather],
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
    });
    expect(called.choices[0]?.finish_reason).toBe('tool_calls');
    expect(called.choices[0]?.message.tool_calls?.[0]).toMatchObject({
      function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
    });
  });

  it('streams its events to OpenAI and Anthropic clients, text and tool calls', async () => {
    const stream = await openAiClient().chat.completions.create({
      model: 'command-r-plus',
      stream: true,
      messages: [{ role: 'user', content: 'hi' }],
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe(COHERE_REPLY);
    const message = await anthropicClient()
      .messages.stream({
        model: 'command-r-plus',
        max_tokens: 50,
        tools: [
          { name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } },
        ],
        messages: [{ role: 'user', content: 'Weather?' }],
      })
      .finalMessage();
    expect(message.stop_reason).toBe('tool_use');
    expect(message.content.find((block) => block.type === 'tool_use')).toMatchObject({
      input: { city: 'Paris' },
    });
  });

  it("fetches Cohere's model list", async () => {
    expect(await fetchUpstreamModels(34, `${clouds.url}/cohere`, COHERE_KEY)).toEqual([
      'command-r-plus',
      'embed-english-v3.0',
    ]);
  });

  it('embeds through the compatibility API and reranks at /v1/rerank', async () => {
    const embedded = await openAiClient().embeddings.create({ model: 'embed-english-v3.0', input: 'hello' });
    expect(embedded.data).toHaveLength(1);
    expect(clouds.requests.at(-1)?.path).toBe('/cohere/compatibility/v1/embeddings');
    const reranked = await fetch(`${address}/v1/rerank`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'rerank-english-v3.0', query: 'q', documents: ['x', 'y'] }),
    });
    expect(reranked.status).toBe(200);
    expect(clouds.requests.at(-1)?.path).toBe('/cohere/v1/rerank');
  });
});

describe('Baidu Wenxin, its first API (15)', () => {
  it("exchanges APIKey|SecretKey for an access token once, and chats in Wenxin's shape, billed, streamed", async () => {
    const { data, response } = await openAiClient()
      .chat.completions.create({
        model: 'ERNIE-4.0-8K',
        max_tokens: 30,
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'hi' },
        ],
      })
      .withResponse();
    expect(data.choices[0]?.message.content).toBe(WENXIN_REPLY);
    const sent = clouds.requests.at(-1)!;
    expect(sent.path).toBe('/baidu/rpc/2.0/ai_custom/v1/wenxinworkshop/chat/completions_pro');
    expect(sent.query.get('access_token')).toMatch(/^24\./);
    expect(sent.body).toEqual({
      messages: [{ role: 'user', content: 'hi' }],
      system: 'Be brief.',
      stream: false,
      max_output_tokens: 30,
    });
    const log = await billed(response.headers.get('x-request-id'));
    expect(log.promptTokens).toBe(9);
    let text = '';
    for await (const chunk of await openAiClient().chat.completions.create({
      model: 'ERNIE-4.0-8K',
      stream: true,
      messages: [{ role: 'user', content: 'hi' }],
    }))
      text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe(WENXIN_REPLY);
    const message = await anthropicClient().messages.create({
      model: 'ERNIE-4.0-8K',
      max_tokens: 20,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(message.content[0]).toMatchObject({ type: 'text', text: WENXIN_REPLY });
    expect(clouds.baiduTokensIssued()).toBe(1);
  });
});
