/**
 * Claude cache writes billed by how long the cache keeps them (issue 39): Anthropic prices a 5-minute cache write
 * at 1.25 × input and a 1-hour one at 2 × input, and reports them apart in `usage.cache_creation`. Every expected
 * quota below is worked out by hand from Anthropic's published prices, not from the project's ratio tables:
 *
 * https://docs.anthropic.com/en/docs/about-claude/pricing, Claude Sonnet 4.5 (prompts ≤ 200K tokens), USD per
 * million tokens: input $3, 5-minute cache write $3.75, 1-hour cache write $6, cache hit $0.30, output $15;
 * 1 USD = 500,000 quota.
 *
 * The answers' `usage` is shaped as Anthropic documents it (testing/claude-cache-usage.ts: 1,000 input, 1,000
 * written to a 1-hour cache, 1,000 to a 5-minute cache, 3,000 read, 500 output), and reaches
 * the relay directly, through Bedrock InvokeModel and through Vertex AI rawPredict, for Anthropic, OpenAI chat,
 * OpenAI Responses and Gemini clients, streamed and not.
 */
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import { logs, users } from '@turnpike/core/db/schema/index';
import { eq } from 'drizzle-orm';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SPLIT_CACHE_USAGE, UNSPLIT_CACHE_USAGE } from './testing/claude-cache-usage.ts';
import {
  EXAMPLE_AWS_ACCOUNT,
  type FakeClouds,
  newVertexAccount,
  startFakeClouds,
} from './testing/fake-clouds.ts';
import { type FakeOpenAi, startFakeOpenAi } from './testing/fake-openai.ts';
import { type FakeProviders, startFakeProviders } from './testing/fake-providers.ts';
import { createRelayTestApp, type RelayTestApp } from './testing/relay-test-app.ts';
import { waitFor } from './testing/wait.ts';

/**
 * 1000 × $3 + 1000 × $6 + 1000 × $3.75 + 3000 × $0.30 + 500 × $15 = $21,150 per million requests
 * = $0.02115 per request × 500,000 = 10,575 quota.
 */
const SPLIT_QUOTA = 10_575;
/** 1000 × $3 + 2000 × $3.75 + 3000 × $0.30 + 500 × $15 = $18,900 per million = $0.0189 × 500,000 = 9,450 quota. */
const UNSPLIT_QUOTA = 9_450;

const MODEL = 'claude-sonnet-4-5';
const STARTING_QUOTA = 50_000_000;
const AWS = EXAMPLE_AWS_ACCOUNT;
const vertex = newVertexAccount();

let t: RelayTestApp;
let fakeOpenAi: FakeOpenAi;
let providers: FakeProviders;
let clouds: FakeClouds;
let address: string;
/** A caller per way to Claude: its channel is the only one of its group that serves the model. */
const callers: Record<Route, { key: string; userId: number }> = {} as never;

type Route = 'anthropic' | 'bedrock' | 'vertex';
const ROUTES: readonly Route[] = ['anthropic', 'bedrock', 'vertex'];

beforeAll(async () => {
  fakeOpenAi = await startFakeOpenAi();
  providers = await startFakeProviders();
  clouds = await startFakeClouds({
    openAiUrl: fakeOpenAi.url,
    providersUrl: providers.url,
    azureKey: 'unused-azure-key',
    vertexAccount: vertex,
    aws: { ...AWS, apiKey: 'unused' },
  });
  t = await createRelayTestApp();
  // The default price tables are under test: only the groups are added (each costs 1 × the model's price).
  await t.runtime.deps.options.set(
    'GroupRatio',
    JSON.stringify({ default: 1, anthropic: 1, bedrock: 1, vertex: 1 }),
  );
  await t.seedChannel({
    type: 14,
    key: 'sk-ant-test',
    baseUrl: providers.url,
    models: MODEL,
    group: 'anthropic',
  });
  await t.seedChannel({
    type: 33,
    key: `${AWS.accessKeyId}|${AWS.secretAccessKey}|${AWS.region}`,
    baseUrl: clouds.url,
    models: MODEL,
    group: 'bedrock',
    modelMapping: { [MODEL]: 'us.anthropic.claude-sonnet-4-5-20250929-v1:0' },
  });
  await t.seedChannel({
    type: 41,
    key: vertex.keyFile(`${clouds.url}/token`),
    baseUrl: clouds.url,
    other: 'us-east5',
    models: MODEL,
    group: 'vertex',
    modelMapping: { [MODEL]: 'claude-sonnet-4-5@20250929' },
  });
  const relay = await t.startRelay();
  address = await relay.listen({ port: 0, host: '127.0.0.1' });
  for (const route of ROUTES) {
    const user = await t.seedUser({ quota: STARTING_QUOTA, group: route });
    callers[route] = { key: `sk-${(await t.seedToken(user.id)).key}`, userId: user.id };
  }
});

afterAll(async () => {
  await t?.close();
  await Promise.all([fakeOpenAi?.close(), providers?.close(), clouds?.close()]);
});

/**
 * The consume log of a call once the user's balance shows it: its quota must be what the user lost (no other call
 * of the user runs at the same time).
 */
async function charged(route: Route, requestId: string | null, before: number) {
  const [log] = await waitFor(async () => {
    const rows = await t.runtime.deps.db
      .select()
      .from(logs)
      .where(eq(logs.requestId, requestId ?? ''));
    return rows.length > 0 ? rows : undefined;
  });
  await waitFor(async () => {
    const [user] = await t.runtime.deps.db.select().from(users).where(eq(users.id, callers[route].userId));
    return user!.quota === before - log!.quota ? true : undefined;
  });
  return { quota: log!.quota, other: JSON.parse(log!.other) as Record<string, unknown> };
}

const balanceOf = async (route: Route) =>
  (await t.runtime.deps.db.select().from(users).where(eq(users.id, callers[route].userId)))[0]!.quota;

const anthropicClient = (route: Route) =>
  new Anthropic({ apiKey: callers[route].key, baseURL: address, maxRetries: 0 });
const openAiClient = (route: Route) =>
  new OpenAI({ apiKey: callers[route].key, baseURL: `${address}/v1`, maxRetries: 0 });
const geminiClient = (route: Route) =>
  new GoogleGenAI({ apiKey: callers[route].key, httpOptions: { baseUrl: address } });

const ASK = 'Summarise the cached document.';

/** One way a client asks, returning the relay's request id. */
const SHAPES: Record<string, (route: Route) => Promise<string | null>> = {
  'Anthropic Messages': async (route) => {
    const { response } = await anthropicClient(route)
      .messages.create({ model: MODEL, max_tokens: 1024, messages: [{ role: 'user', content: ASK }] })
      .withResponse();
    return response.headers.get('x-request-id');
  },
  'Anthropic Messages, streamed': async (route) => {
    const stream = anthropicClient(route).messages.stream({
      model: MODEL,
      max_tokens: 1024,
      messages: [{ role: 'user', content: ASK }],
    });
    await stream.finalMessage();
    const { response } = await stream.withResponse();
    return response.headers.get('x-request-id');
  },
  'OpenAI chat completions': async (route) => {
    const { response } = await openAiClient(route)
      .chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: ASK }] })
      .withResponse();
    return response.headers.get('x-request-id');
  },
  'OpenAI chat completions, streamed': async (route) => {
    const { data, response } = await openAiClient(route)
      .chat.completions.create({
        model: MODEL,
        messages: [{ role: 'user', content: ASK }],
        stream: true,
        stream_options: { include_usage: true },
      })
      .withResponse();
    for await (const _chunk of data) {
      // drain the stream
    }
    return response.headers.get('x-request-id');
  },
  'OpenAI Responses': async (route) => {
    const { response } = await openAiClient(route)
      .responses.create({ model: MODEL, input: ASK })
      .withResponse();
    return response.headers.get('x-request-id');
  },
  'Gemini generateContent': async (route) => {
    let requestId: string | null = null;
    const gemini = geminiClient(route);
    const answer = await gemini.models.generateContent({ model: MODEL, contents: ASK });
    requestId = answer.sdkHttpResponse?.headers?.['x-request-id'] ?? null;
    return requestId;
  },
};

describe('Claude cache writes by duration (Sonnet 4.5 at Anthropic published prices)', () => {
  for (const route of ROUTES) {
    for (const [shape, call] of Object.entries(SHAPES)) {
      it(`bills 1-hour writes at $6 and 5-minute writes at $3.75 per million: ${shape} via ${route}`, async () => {
        providers.setBehaviour({ anthropicUsage: SPLIT_CACHE_USAGE });
        const before = await balanceOf(route);
        const { quota, other } = await charged(route, await call(route), before);
        expect(quota).toBe(SPLIT_QUOTA);
        // The log names both parts, so the charge can be checked by hand.
        expect(other).toMatchObject({
          cache_tokens: 3000,
          cache_creation_tokens: 2000,
          cache_creation_tokens_5m: 1000,
          cache_creation_ratio_5m: 1.25,
          cache_creation_tokens_1h: 1000,
          cache_creation_ratio_1h: 2,
        });
      });
    }
  }

  for (const route of ROUTES) {
    for (const shape of ['Anthropic Messages', 'Anthropic Messages, streamed', 'OpenAI chat completions']) {
      it(`bills an answer without the split as 5-minute writes: ${shape} via ${route}`, async () => {
        providers.setBehaviour({ anthropicUsage: UNSPLIT_CACHE_USAGE });
        const before = await balanceOf(route);
        const { quota, other } = await charged(route, await SHAPES[shape]!(route), before);
        expect(quota).toBe(UNSPLIT_QUOTA);
        expect(other).toMatchObject({ cache_creation_tokens_5m: 2000, cache_creation_tokens_1h: 0 });
      });
    }
  }
});
