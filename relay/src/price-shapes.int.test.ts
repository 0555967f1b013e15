/**
 * The price shapes of 2026 through the real relay (issue 39, docs/adr/0042): long-context tiers, service tiers and
 * per-request fees, with the built-in price tables (nothing priced by hand), fake upstreams answering in their real
 * wire formats, and the charge read from the consume log and the balance. Every expected quota is worked out by hand
 * from the providers' published prices (1 USD = 500,000 quota), never with the project's ratio tables:
 *
 * - Claude Sonnet 4.5, https://docs.anthropic.com/en/docs/about-claude/pricing: $3 input, $15 output per million;
 *   prompts over 200K tokens (1M context) $6 input, $22.50 output for the whole call. Web search,
 *   https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/web-search-tool: $10 per 1,000 searches.
 * - GPT-5, https://platform.openai.com/docs/pricing: $1.25 input, $10 output; priority
 *   (https://openai.com/api-priority-processing/) $2.50 / $20; flex $0.625 / $5. GPT-4o search preview: $2.50 /
 *   $10, web search $25 / 1k calls; web search on GPT-5: $10 / 1k calls.
 * - Gemini, https://ai.google.dev/gemini-api/docs/pricing: 2.5 Pro $1.25 / $10 (over 200k prompt tokens $2.50 /
 *   $15), grounding $35 / 1,000 grounded prompts; 3 Pro Preview $2 / $12, grounding $14 / 1,000 search queries.
 *
 * The mixes: issue 39's long call, 250,000 input + 1,000 output tokens; three searches on 1,000 input + 500 output;
 * 10,000 input + 1,000 output for GPT-5 and Gemini. Each reaches the relay directly and through the clouds (Bedrock
 * InvokeModel, Vertex rawPredict and generateContent) for the clients of every wire format, streamed and not, passed
 * through and converted.
 */
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import { logs, users } from '@turnpike/core/db/schema/index';
import { eq } from 'drizzle-orm';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

const CLAUDE = 'claude-sonnet-4-5';
const GPT5 = 'gpt-5';
const SEARCH_MODEL = 'gpt-4o-search-preview';
const GEMINI_25 = 'gemini-2.5-pro';
const GEMINI_3 = 'gemini-3-pro-preview';

/** Issue 39's long call: 250,000 input + 1,000 output, 250000 × $6 + 1000 × $22.50 = $1.5225 (not $0.765). */
const LONG_CALL_USAGE = { input_tokens: 250_000, output_tokens: 1000 };
const LONG_CALL_QUOTA = 761_250;
/** 1000 × $3 + 500 × $15 = $0.0105 (5,250 quota) and three searches × $0.01 = $0.03 (15,000): 20,250. */
const SEARCH_USAGE = { input_tokens: 1000, output_tokens: 500, server_tool_use: { web_search_requests: 3 } };
const SEARCH_QUOTA = 20_250;
/** GPT-5 on 10,000 input + 1,000 output: $0.0225 standard, $0.045 at priority, $0.01125 at flex. */
const GPT5_USAGE = { promptTokens: 10_000, completionTokens: 1000 };
const GPT5_QUOTA = { default: 11_250, priority: 22_500, flex: 5625 } as const;
/** Gemini on 10,000 input + 1,000 output, grounded with two queries. */
const GEMINI_USAGE = { promptTokenCount: 10_000, candidatesTokenCount: 1000, totalTokenCount: 11_000 };
const GROUNDING = {
  webSearchQueries: ['who won euro 2024', 'euro 2024 final score'],
  groundingChunks: [{ web: { uri: 'https://www.uefa.com/euro2024/', title: 'uefa.com' } }],
};
/**
 * 2.5 Pro: 10000 × $1.25 + 1000 × $10 = $0.0225 and one grounded prompt $0.035: 28,750. 3 Pro Preview:
 * 10000 × $2 + 1000 × $12 = $0.032 and two queries × $0.014 = $0.028: 30,000.
 */
const GROUNDED_QUOTA = { [GEMINI_25]: 28_750, [GEMINI_3]: 30_000 } as const;

const AWS = EXAMPLE_AWS_ACCOUNT;
const vertex = newVertexAccount();
let t: RelayTestApp;
let fakeOpenAi: FakeOpenAi;
let providers: FakeProviders;
let clouds: FakeClouds;
let address: string;

type Group = 'anthropic' | 'bedrock' | 'vertex' | 'openai' | 'gemini';
/** A caller per group: its channel is the only one of the group that serves the model. */
const callers = {} as Record<Group, { key: string; userId: number }>;

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
    JSON.stringify({ default: 1, anthropic: 1, bedrock: 1, vertex: 1, openai: 1, gemini: 1 }),
  );
  await t.seedChannel({
    type: 14,
    key: 'sk-ant-test',
    baseUrl: providers.url,
    models: CLAUDE,
    group: 'anthropic',
  });
  await t.seedChannel({
    type: 33,
    key: `${AWS.accessKeyId}|${AWS.secretAccessKey}|${AWS.region}`,
    baseUrl: clouds.url,
    models: CLAUDE,
    group: 'bedrock',
    modelMapping: { [CLAUDE]: 'us.anthropic.claude-sonnet-4-5-20250929-v1:0' },
  });
  await t.seedChannel({
    type: 41,
    key: vertex.keyFile(`${clouds.url}/token`),
    baseUrl: clouds.url,
    other: 'us-east5',
    models: [CLAUDE, GEMINI_25, GEMINI_3].join(','),
    group: 'vertex',
    modelMapping: { [CLAUDE]: 'claude-sonnet-4-5@20250929' },
  });
  await t.seedChannel({
    type: 1,
    key: 'sk-openai-test',
    baseUrl: fakeOpenAi.url,
    models: [GPT5, SEARCH_MODEL].join(','),
    group: 'openai',
  });
  await t.seedChannel({
    type: 24,
    key: 'AIza-gemini-test',
    baseUrl: providers.url,
    models: [GEMINI_25, GEMINI_3].join(','),
    group: 'gemini',
  });
  const relay = await t.startRelay();
  address = await relay.listen({ port: 0, host: '127.0.0.1' });
  for (const group of ['anthropic', 'bedrock', 'vertex', 'openai', 'gemini'] as const) {
    const user = await t.seedUser({ quota: 50_000_000, group });
    callers[group] = { key: `sk-${(await t.seedToken(user.id)).key}`, userId: user.id };
  }
});

afterAll(async () => {
  await t?.close();
  await Promise.all([fakeOpenAi?.close(), providers?.close(), clouds?.close()]);
});

const balanceOf = async (userId: number) =>
  (await t.runtime.deps.db.select().from(users).where(eq(users.id, userId)))[0]!.quota;

/**
 * The consume log of a call once the user's balance shows it: its quota must be what the user lost (no other call
 * of the user runs at the same time).
 */
async function charged(group: Group, call: () => Promise<string | null>) {
  const { userId } = callers[group];
  const before = await balanceOf(userId);
  const requestId = await call();
  const [log] = await waitFor(async () => {
    const rows = await t.runtime.deps.db
      .select()
      .from(logs)
      .where(eq(logs.requestId, requestId ?? ''));
    return rows.length > 0 ? rows : undefined;
  });
  await waitFor(async () => ((await balanceOf(userId)) === before - log!.quota ? true : undefined));
  return { quota: log!.quota, other: JSON.parse(log!.other) as Record<string, unknown> };
}

const anthropicClient = (group: Group) =>
  new Anthropic({ apiKey: callers[group].key, baseURL: address, maxRetries: 0 });
const openAiClient = (group: Group) =>
  new OpenAI({ apiKey: callers[group].key, baseURL: `${address}/v1`, maxRetries: 0 });
const geminiClient = (group: Group) =>
  new GoogleGenAI({ apiKey: callers[group].key, httpOptions: { baseUrl: address } });

const ASK = 'Who won Euro 2024?';

/** One way a client asks, returning the relay's request id. */
type Shape = (group: Group, model: string) => Promise<string | null>;

const SHAPES = {
  'Anthropic Messages': async (group, model) => {
    const { response } = await anthropicClient(group)
      .messages.create({ model, max_tokens: 1024, messages: [{ role: 'user', content: ASK }] })
      .withResponse();
    return response.headers.get('x-request-id');
  },
  'Anthropic Messages, streamed': async (group, model) => {
    const stream = anthropicClient(group).messages.stream({
      model,
      max_tokens: 1024,
      messages: [{ role: 'user', content: ASK }],
    });
    await stream.finalMessage();
    const { response } = await stream.withResponse();
    return response.headers.get('x-request-id');
  },
  'OpenAI chat completions': async (group, model) => {
    const { response } = await openAiClient(group)
      .chat.completions.create({ model, messages: [{ role: 'user', content: ASK }] })
      .withResponse();
    return response.headers.get('x-request-id');
  },
  'OpenAI chat completions, streamed': async (group, model) => {
    const { data, response } = await openAiClient(group)
      .chat.completions.create({
        model,
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
  'OpenAI Responses': async (group, model) => {
    const { response } = await openAiClient(group).responses.create({ model, input: ASK }).withResponse();
    return response.headers.get('x-request-id');
  },
  'OpenAI Responses, streamed': async (group, model) => {
    const { data, response } = await openAiClient(group)
      .responses.create({ model, input: ASK, stream: true })
      .withResponse();
    for await (const _event of data) {
      // drain the stream
    }
    return response.headers.get('x-request-id');
  },
  'Gemini generateContent': async (group, model) => {
    const answer = await geminiClient(group).models.generateContent({ model, contents: ASK });
    return answer.sdkHttpResponse?.headers?.['x-request-id'] ?? null;
  },
  'Gemini streamGenerateContent': async (group, model) => {
    const response = await fetch(`${address}/v1beta/models/${model}:streamGenerateContent?alt=sse`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-goog-api-key': callers[group].key },
      body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: ASK }] }] }),
    });
    expect(response.status).toBe(200);
    await response.text();
    return response.headers.get('x-request-id');
  },
} satisfies Record<string, Shape>;
type ShapeName = keyof typeof SHAPES;

const EVERY_CLIENT: readonly ShapeName[] = [
  'Anthropic Messages',
  'Anthropic Messages, streamed',
  'OpenAI chat completions',
  'OpenAI chat completions, streamed',
  'OpenAI Responses',
  'Gemini generateContent',
];

describe('Claude Sonnet 4.5 past 200K prompt tokens: the whole call at $6 / $22.50', () => {
  for (const group of ['anthropic', 'bedrock', 'vertex'] as const) {
    for (const shape of EVERY_CLIENT) {
      it(`bills issue 39's 250,000-token call 761,250 quota: ${shape} via ${group}`, async () => {
        providers.setBehaviour({ anthropicUsage: LONG_CALL_USAGE });
        const { quota, other } = await charged(group, () => SHAPES[shape](group, CLAUDE));
        expect(quota).toBe(LONG_CALL_QUOTA);
        expect(other).toMatchObject({
          long_context_above: 200_000,
          long_context_input_ratio: 2,
          long_context_output_ratio: 1.5,
          long_context_cache_ratio: 2,
        });
      });
    }
  }

  it('bills a call of 200,000 prompt tokens at the short-context price: 200000 × $3 + 1000 × $15', async () => {
    providers.setBehaviour({ anthropicUsage: { input_tokens: 200_000, output_tokens: 1000 } });
    const { quota, other } = await charged('anthropic', () =>
      SHAPES['Anthropic Messages']('anthropic', CLAUDE),
    );
    expect(quota).toBe(307_500);
    expect(other).not.toHaveProperty('long_context_above');
  });
});

describe('Claude web searches at $10 per 1,000', () => {
  for (const group of ['anthropic', 'bedrock', 'vertex'] as const) {
    for (const shape of EVERY_CLIENT) {
      it(`adds 3 × $0.01 to the tokens: ${shape} via ${group}`, async () => {
        providers.setBehaviour({ anthropicUsage: SEARCH_USAGE });
        const { quota, other } = await charged(group, () => SHAPES[shape](group, CLAUDE));
        expect(quota).toBe(SEARCH_QUOTA);
        expect(other).toMatchObject({ web_search_calls: 3, web_search_price: 0.01, fees_quota: 15_000 });
      });
    }
  }
});

describe('GPT-5 billed by the service tier the answer reports', () => {
  const shapes: readonly ShapeName[] = [
    'OpenAI chat completions',
    'OpenAI chat completions, streamed',
    'OpenAI Responses',
    'OpenAI Responses, streamed',
    'Anthropic Messages',
    'Anthropic Messages, streamed',
    'Gemini generateContent',
  ];
  for (const tier of ['priority', 'flex', 'default'] as const) {
    for (const shape of shapes) {
      it(`bills an answer served at ${tier} ${GPT5_QUOTA[tier]} quota: ${shape}`, async () => {
        fakeOpenAi.setBehaviour({ serviceTier: tier, fixedUsage: GPT5_USAGE, webSearchCalls: 0 });
        const { quota, other } = await charged('openai', () => SHAPES[shape]('openai', GPT5));
        expect(quota).toBe(GPT5_QUOTA[tier]);
        if (tier === 'default') expect(other).not.toHaveProperty('service_tier');
        else
          expect(other).toMatchObject({
            service_tier: tier,
            service_tier_ratio: tier === 'priority' ? 2 : 0.5,
          });
      });
    }
  }

  it('bills what the answer reports, not what the request asked for', async () => {
    fakeOpenAi.setBehaviour({ serviceTier: 'priority', fixedUsage: GPT5_USAGE, webSearchCalls: 0 });
    const { quota } = await charged('openai', async () => {
      const { response } = await openAiClient('openai')
        .chat.completions.create({
          model: GPT5,
          service_tier: 'flex',
          messages: [{ role: 'user', content: ASK }],
        })
        .withResponse();
      return response.headers.get('x-request-id');
    });
    expect(quota).toBe(GPT5_QUOTA.priority);
  });
});

describe('OpenAI web searches', () => {
  for (const shape of ['OpenAI Responses', 'OpenAI Responses, streamed'] as const) {
    it(`adds two web_search_call items × $0.01 to GPT-5's $0.0225: ${shape}`, async () => {
      fakeOpenAi.setBehaviour({ serviceTier: 'default', fixedUsage: GPT5_USAGE, webSearchCalls: 2 });
      const { quota, other } = await charged('openai', () => SHAPES[shape]('openai', GPT5));
      expect(quota).toBe(21_250);
      expect(other).toMatchObject({ web_search_calls: 2, web_search_price: 0.01, fees_quota: 10_000 });
    });
  }

  for (const shape of [
    'OpenAI chat completions',
    'OpenAI chat completions, streamed',
    'Anthropic Messages',
  ] as const)
    it(`bills a search model's answer one call: 10000 × $2.50 + 1000 × $10 + $0.025: ${shape}`, async () => {
      fakeOpenAi.setBehaviour({ serviceTier: 'default', fixedUsage: GPT5_USAGE, webSearchCalls: 0 });
      const { quota, other } = await charged('openai', () => SHAPES[shape]('openai', SEARCH_MODEL));
      expect(quota).toBe(30_000);
      expect(other).toMatchObject({ web_search_calls: 1, web_search_price: 0.025 });
    });
});

describe('Gemini grounding with Google Search', () => {
  const shapes: readonly ShapeName[] = [
    'Gemini generateContent',
    'Gemini streamGenerateContent',
    'OpenAI chat completions',
    'OpenAI chat completions, streamed',
    'Anthropic Messages',
  ];
  for (const group of ['gemini', 'vertex'] as const) {
    for (const model of [GEMINI_25, GEMINI_3] as const) {
      for (const shape of shapes) {
        it(`bills ${model} ${GROUNDED_QUOTA[model]} quota: ${shape} via ${group}`, async () => {
          providers.setBehaviour({ geminiUsage: GEMINI_USAGE, geminiGrounding: GROUNDING });
          const { quota, other } = await charged(group, () => SHAPES[shape](group, model));
          expect(quota).toBe(GROUNDED_QUOTA[model]);
          expect(other).toMatchObject({ web_search_calls: model === GEMINI_3 ? 2 : 1 });
        });
      }
    }
  }

  for (const shape of ['Gemini generateContent', 'OpenAI chat completions, streamed'] as const)
    it(`bills Gemini 2.5 Pro past 200k prompt tokens at $2.50 / $15: ${shape}`, async () => {
      providers.setBehaviour({
        geminiUsage: { promptTokenCount: 250_000, candidatesTokenCount: 1000, totalTokenCount: 251_000 },
        geminiGrounding: undefined,
      });
      // 250000 × $2.50 + 1000 × $15 = $0.64.
      const { quota, other } = await charged('gemini', () => SHAPES[shape]('gemini', GEMINI_25));
      expect(quota).toBe(320_000);
      expect(other).toMatchObject({ long_context_above: 200_000, long_context_input_ratio: 2 });
    });
});

describe('the hold is taken at the price the call will be billed at', () => {
  /** A Messages call whose prompt the relay counts at a little over 250,000 tokens. */
  const longCall = (key: string) =>
    fetch(`${address}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key, 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({
        model: CLAUDE,
        max_tokens: 1000,
        messages: [{ role: 'user', content: 'hello '.repeat(250_000) }],
      }),
    });

  it('refuses a 250k-token prompt a balance covers at the short-context price but not at the tier price', async () => {
    // The short-context estimate (250,000 + 1,000) × 1.5 = 376,500 would fit in 500,000; at the tier price
    // (250,000 × 2 + 1,000 × 1.5) × 1.5 = 752,250 it does not, and the upstream is never called.
    const user = await t.seedUser({ quota: 500_000, group: 'anthropic' });
    const key = `sk-${(await t.seedToken(user.id)).key}`;
    const calls = providers.requests.length;
    const refused = await longCall(key);
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain('quota is not enough');
    expect(providers.requests.length).toBe(calls);
    expect(await balanceOf(user.id)).toBe(500_000);
  });

  it('counts the prompt of a tiered model even when the request names no output limit', async () => {
    // A chat request without max_tokens is held at PreConsumedQuota (500 tokens × 1.5 = 750) for a short prompt;
    // a 250k-token one is held at (250,000 × 2 + 500 × 1.5) × 1.5 = 751,125, more than the 500,000 there is.
    const user = await t.seedUser({ quota: 500_000, group: 'anthropic' });
    const key = `sk-${(await t.seedToken(user.id)).key}`;
    const calls = providers.requests.length;
    const refused = await fetch(`${address}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({
        model: CLAUDE,
        messages: [{ role: 'user', content: 'hello '.repeat(250_000) }],
      }),
    });
    expect(refused.status).toBe(403);
    expect(providers.requests.length).toBe(calls);
  });

  it('admits the same call when the balance covers the tier price, and bills it at the tier', async () => {
    providers.setBehaviour({ anthropicUsage: LONG_CALL_USAGE });
    const user = await t.seedUser({ quota: 800_000, group: 'anthropic' });
    const key = `sk-${(await t.seedToken(user.id)).key}`;
    const admitted = await longCall(key);
    expect(admitted.status).toBe(200);
    await admitted.text();
    await waitFor(async () => ((await balanceOf(user.id)) === 800_000 - LONG_CALL_QUOTA ? true : undefined));
  });

  it('holds a request asking for priority at the priority price, and one asking for flex at the standard one', async () => {
    fakeOpenAi.setBehaviour({ serviceTier: 'default', fixedUsage: GPT5_USAGE, webSearchCalls: 0 });
    // max_tokens 100,000 on GPT-5 (ratio 0.625): about 62,500 quota at the standard price, 125,000 at priority.
    const user = await t.seedUser({ quota: 100_000, group: 'openai' });
    const client = new OpenAI({
      apiKey: `sk-${(await t.seedToken(user.id)).key}`,
      baseURL: `${address}/v1`,
      maxRetries: 0,
    });
    const ask = (service_tier: 'priority' | 'flex') =>
      client.chat.completions.create({
        model: GPT5,
        service_tier,
        max_completion_tokens: 100_000,
        messages: [{ role: 'user', content: ASK }],
      });
    const calls = fakeOpenAi.requests.length;
    await expect(ask('priority')).rejects.toMatchObject({ status: 403 });
    expect(fakeOpenAi.requests.length).toBe(calls);
    await expect(ask('flex')).resolves.toMatchObject({ service_tier: 'default' });
  });
});
