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
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  balanceOf,
  CLAUDE_SONNET_45 as CLAUDE,
  CLAUDE_ROUTES,
  type ClientShape,
  chargeOf,
  EVERY_CLIENT,
  type GoldenRelay,
  startGoldenRelay,
} from './testing/golden-calls.ts';
import { waitFor } from './testing/wait.ts';

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

const GROUPS = [...CLAUDE_ROUTES, 'openai', 'gemini'] as const;
type Group = (typeof GROUPS)[number];
/** The relay, its fakes, and a caller per group (its channel is the only one of the group that serves the model). */
let golden: GoldenRelay;

beforeAll(async () => {
  golden = await startGoldenRelay({
    groups: GROUPS,
    vertexModels: [GEMINI_25, GEMINI_3],
    async seed(t, fakes) {
      await t.seedChannel({
        key: 'sk-openai-test',
        baseUrl: fakes.openAi.url,
        models: `${GPT5},${SEARCH_MODEL}`,
        group: 'openai',
      });
      await t.seedChannel({
        type: 24,
        key: 'AIza-gemini-test',
        baseUrl: fakes.providers.url,
        models: `${GEMINI_25},${GEMINI_3}`,
        group: 'gemini',
      });
    },
  });
});

afterAll(async () => {
  await golden?.close();
});

/** The consume log of a call of the group's caller, once the balance shows it (golden-calls.ts). */
const charged = (group: Group, call: () => Promise<string | null>) =>
  chargeOf(golden.t, golden.callerOf(group).userId, call);
/** The same for a call of a client shape. */
const chargedFor = (group: Group, shape: ClientShape, model: string) =>
  charged(group, () => golden.calls[shape](group, model));

const ASK = 'Who won Euro 2024?';

describe('Claude Sonnet 4.5 past 200K prompt tokens: the whole call at $6 / $22.50', () => {
  for (const group of CLAUDE_ROUTES) {
    for (const shape of EVERY_CLIENT) {
      it(`bills issue 39's 250,000-token call 761,250 quota: ${shape} via ${group}`, async () => {
        golden.providers.setBehaviour({ anthropicUsage: LONG_CALL_USAGE });
        const { quota, other } = await chargedFor(group, shape, CLAUDE);
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
    golden.providers.setBehaviour({ anthropicUsage: { input_tokens: 200_000, output_tokens: 1000 } });
    const { quota, other } = await chargedFor('anthropic', 'Anthropic Messages', CLAUDE);
    expect(quota).toBe(307_500);
    expect(other).not.toHaveProperty('long_context_above');
  });
});

describe('Claude web searches at $10 per 1,000', () => {
  for (const group of CLAUDE_ROUTES) {
    for (const shape of EVERY_CLIENT) {
      it(`adds 3 × $0.01 to the tokens: ${shape} via ${group}`, async () => {
        golden.providers.setBehaviour({ anthropicUsage: SEARCH_USAGE });
        const { quota, other } = await chargedFor(group, shape, CLAUDE);
        expect(quota).toBe(SEARCH_QUOTA);
        expect(other).toMatchObject({ web_search_calls: 3, web_search_price: 0.01, fees_quota: 15_000 });
      });
    }
  }
});

describe('GPT-5 billed by the service tier the answer reports', () => {
  const shapes: readonly ClientShape[] = [
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
        golden.openAi.setBehaviour({ serviceTier: tier, fixedUsage: GPT5_USAGE, webSearchCalls: 0 });
        const { quota, other } = await chargedFor('openai', shape, GPT5);
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
    golden.openAi.setBehaviour({ serviceTier: 'priority', fixedUsage: GPT5_USAGE, webSearchCalls: 0 });
    const { quota } = await charged('openai', async () => {
      const { response } = await new OpenAI({
        apiKey: golden.callerOf('openai').key,
        baseURL: `${golden.address}/v1`,
        maxRetries: 0,
      }).chat.completions
        .create({
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
      golden.openAi.setBehaviour({ serviceTier: 'default', fixedUsage: GPT5_USAGE, webSearchCalls: 2 });
      const { quota, other } = await chargedFor('openai', shape, GPT5);
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
      golden.openAi.setBehaviour({ serviceTier: 'default', fixedUsage: GPT5_USAGE, webSearchCalls: 0 });
      const { quota, other } = await chargedFor('openai', shape, SEARCH_MODEL);
      expect(quota).toBe(30_000);
      expect(other).toMatchObject({ web_search_calls: 1, web_search_price: 0.025 });
    });
});

describe('Gemini grounding with Google Search', () => {
  const shapes: readonly ClientShape[] = [
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
          golden.providers.setBehaviour({ geminiUsage: GEMINI_USAGE, geminiGrounding: GROUNDING });
          const { quota, other } = await chargedFor(group, shape, model);
          expect(quota).toBe(GROUNDED_QUOTA[model]);
          expect(other).toMatchObject({ web_search_calls: model === GEMINI_3 ? 2 : 1 });
        });
      }
    }
  }

  for (const shape of ['Gemini generateContent', 'OpenAI chat completions, streamed'] as const)
    it(`bills Gemini 2.5 Pro past 200k prompt tokens at $2.50 / $15: ${shape}`, async () => {
      golden.providers.setBehaviour({
        geminiUsage: { promptTokenCount: 250_000, candidatesTokenCount: 1000, totalTokenCount: 251_000 },
        geminiGrounding: undefined,
      });
      // 250000 × $2.50 + 1000 × $15 = $0.64.
      const { quota, other } = await chargedFor('gemini', shape, GEMINI_25);
      expect(quota).toBe(320_000);
      expect(other).toMatchObject({ long_context_above: 200_000, long_context_input_ratio: 2 });
    });
});

describe('the hold is taken at the price the call will be billed at', () => {
  /** A Messages call whose prompt the relay counts at a little over 250,000 tokens. */
  const longCall = (key: string) =>
    fetch(`${golden.address}/v1/messages`, {
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
    const user = await golden.t.seedUser({ quota: 500_000, group: 'anthropic' });
    const key = `sk-${(await golden.t.seedToken(user.id)).key}`;
    const calls = golden.providers.requests.length;
    const refused = await longCall(key);
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain('quota is not enough');
    expect(golden.providers.requests.length).toBe(calls);
    expect(await balanceOf(golden.t, user.id)).toBe(500_000);
  });

  it('counts the prompt of a tiered model even when the request names no output limit', async () => {
    // A chat request without max_tokens is held at PreConsumedQuota (500 tokens × 1.5 = 750) for a short prompt;
    // a 250k-token one is held at (250,000 × 2 + 500 × 1.5) × 1.5 = 751,125, more than the 500,000 there is.
    const user = await golden.t.seedUser({ quota: 500_000, group: 'anthropic' });
    const key = `sk-${(await golden.t.seedToken(user.id)).key}`;
    const calls = golden.providers.requests.length;
    const refused = await fetch(`${golden.address}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({
        model: CLAUDE,
        messages: [{ role: 'user', content: 'hello '.repeat(250_000) }],
      }),
    });
    expect(refused.status).toBe(403);
    expect(golden.providers.requests.length).toBe(calls);
  });

  it('admits the same call when the balance covers the tier price, and bills it at the tier', async () => {
    golden.providers.setBehaviour({ anthropicUsage: LONG_CALL_USAGE });
    const user = await golden.t.seedUser({ quota: 800_000, group: 'anthropic' });
    const key = `sk-${(await golden.t.seedToken(user.id)).key}`;
    const admitted = await longCall(key);
    expect(admitted.status).toBe(200);
    await admitted.text();
    await waitFor(async () =>
      (await balanceOf(golden.t, user.id)) === 800_000 - LONG_CALL_QUOTA ? true : undefined,
    );
  });

  it('holds a request asking for priority at the priority price, and one asking for flex at the standard one', async () => {
    golden.openAi.setBehaviour({ serviceTier: 'default', fixedUsage: GPT5_USAGE, webSearchCalls: 0 });
    // max_tokens 100,000 on GPT-5 (ratio 0.625): about 62,500 quota at the standard price, 125,000 at priority.
    const user = await golden.t.seedUser({ quota: 100_000, group: 'openai' });
    const client = new OpenAI({
      apiKey: `sk-${(await golden.t.seedToken(user.id)).key}`,
      baseURL: `${golden.address}/v1`,
      maxRetries: 0,
    });
    const ask = (service_tier: 'priority' | 'flex') =>
      client.chat.completions.create({
        model: GPT5,
        service_tier,
        max_completion_tokens: 100_000,
        messages: [{ role: 'user', content: ASK }],
      });
    const calls = golden.openAi.requests.length;
    await expect(ask('priority')).rejects.toMatchObject({ status: 403 });
    expect(golden.openAi.requests.length).toBe(calls);
    await expect(ask('flex')).resolves.toMatchObject({ service_tier: 'default' });
  });
});
