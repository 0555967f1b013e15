/**
 * The price shapes are set where prices are set (`PUT /api/option/`, the pricing editor's JSON fields;
 * docs/adr/0042): a saved `RequestFees`, `LongContextTiers` or `ServiceTierRatio` entry is what the next call pays,
 * and a value of the wrong shape is refused. The figures before a change are the built-in ones, from the providers'
 * pages (Claude Sonnet 4.5 at https://docs.anthropic.com/en/docs/about-claude/pricing: $3 / $15 per million, web
 * search $10 per 1,000; Gemini 2.5 Pro at https://ai.google.dev/gemini-api/docs/pricing: $1.25 / $10); after it,
 * the operator's (1 USD = 500,000 quota). The Gemini API names the tier it served in its `x-gemini-service-tier`
 * header (https://ai.google.dev/gemini-api/docs/priority-inference), which the fake sends.
 */

import { type FakeProviders, startFakeProviders } from '@turnpike/relay/testing/fake-providers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRelayTestApp, type RelayTestApp } from '../testing/all-test-app.ts';
import { setupRoot } from '../testing/test-app.ts';

const CLAUDE = 'claude-sonnet-4-5';
const GEMINI = 'gemini-2.5-pro';
let t: RelayTestApp;
let providers: FakeProviders;
let admin: Awaited<ReturnType<typeof setupRoot>>;
let key = '';

beforeAll(async () => {
  providers = await startFakeProviders();
  t = await createRelayTestApp();
  await t.seedChannel({ type: 14, key: 'sk-ant-test', baseUrl: providers.url, models: CLAUDE });
  await t.seedChannel({ type: 24, key: 'AIza-test', baseUrl: providers.url, models: GEMINI });
  await t.startRelay();
  admin = await setupRoot(t.app);
  await admin.put('/api/option/', { key: 'GroupRatio', value: JSON.stringify({ default: 1 }) });
  const user = await t.seedUser({ quota: 100_000_000 });
  key = (await t.seedToken(user.id)).key;
});

afterAll(async () => {
  await t?.close();
  await providers?.close();
});

const save = async (option: string, value: unknown) =>
  (await admin.put('/api/option/', { key: option, value: JSON.stringify(value) })).json().success as boolean;

const askClaude = async () => {
  const answer = await t.relay.inject({
    method: 'POST',
    url: '/v1/messages',
    headers: { 'x-api-key': `sk-${key}`, 'anthropic-version': '2023-06-01' },
    payload: { model: CLAUDE, max_tokens: 1024, messages: [{ role: 'user', content: 'hi' }] },
  });
  expect(answer.statusCode, answer.body).toBe(200);
  return Number(answer.headers['x-turnpike-quota']);
};

const askGemini = async () => {
  const answer = await t.relay.inject({
    method: 'POST',
    url: `/v1beta/models/${GEMINI}:generateContent`,
    headers: { 'x-goog-api-key': `sk-${key}` },
    payload: { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] },
  });
  expect(answer.statusCode, answer.body).toBe(200);
  return Number(answer.headers['x-turnpike-quota']);
};

describe('the price shapes set in the console', () => {
  it('bills a saved web search fee from the next call', async () => {
    providers.setBehaviour({
      anthropicUsage: { input_tokens: 1000, output_tokens: 500, server_tool_use: { web_search_requests: 3 } },
    });
    // 1000 × $3 + 500 × $15 = $0.0105 and 3 × $0.01: $0.0405, 20,250 quota.
    expect(await askClaude()).toBe(20_250);
    expect(await save('RequestFees', { 'claude-*': { web_search: 0.02 } })).toBe(true);
    // The searches at $0.02: $0.0105 + $0.06 = $0.0705, 35,250 quota.
    expect(await askClaude()).toBe(35_250);
  });

  it('bills a saved long-context tier from the next call', async () => {
    providers.setBehaviour({ anthropicUsage: { input_tokens: 2000, output_tokens: 500 } });
    // 2000 × $3 + 500 × $15 = $0.0135, 6,750 quota.
    expect(await askClaude()).toBe(6750);
    expect(await save('LongContextTiers', { [CLAUDE]: [{ above: 1000, input: 3, output: 2 }] })).toBe(true);
    // Past 1,000 prompt tokens at 3 × and 2 ×: 2000 × $9 + 500 × $30 = $0.033, 16,500 quota.
    expect(await askClaude()).toBe(16_500);
  });

  it("bills the Gemini API's served tier from its header at a saved multiplier", async () => {
    providers.setBehaviour({
      geminiUsage: { promptTokenCount: 10_000, candidatesTokenCount: 1000, totalTokenCount: 11_000 },
      geminiServiceTier: 'priority',
    });
    // No multiplier for Gemini by default: 10000 × $1.25 + 1000 × $10 = $0.0225, 11,250 quota.
    expect(await askGemini()).toBe(11_250);
    expect(await save('ServiceTierRatio', { 'gemini-2.5-*': { priority: 1.8 } })).toBe(true);
    // The same tokens at 1.8 ×: $0.0405, 20,250 quota.
    expect(await askGemini()).toBe(20_250);
  });

  it('refuses shapes that are not prices', async () => {
    expect(await save('RequestFees', { 'claude-*': { web_search: -1 } })).toBe(false);
    expect(await save('RequestFees', { 'claude-*': { per_call: 1 } })).toBe(false);
    expect(
      await save('LongContextTiers', {
        [CLAUDE]: [
          { above: 1000, input: 2, output: 2 },
          { above: 1000, input: 3, output: 3 },
        ],
      }),
    ).toBe(false);
    expect(await save('ServiceTierRatio', { [GEMINI]: { Priority: 2 } })).toBe(false);
  });
});
