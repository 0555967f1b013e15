import { settleTokens } from '@turnpike/core/billing/settle';
import { describe, expect, it } from 'vitest';
import {
  hasUsage,
  mergeAnthropicUsage,
  normaliseAnthropicUsage,
  normaliseOpenAiUsage,
  toOpenAiUsage,
} from './usage.ts';

describe('normaliseOpenAiUsage', () => {
  it('reads chat usage with cached, audio and reasoning details', () => {
    const usage = normaliseOpenAiUsage({
      prompt_tokens: 1200,
      completion_tokens: 300,
      total_tokens: 1500,
      prompt_tokens_details: { cached_tokens: 1024, audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 128, audio_tokens: 0 },
    });
    expect(usage).toMatchObject({
      promptTokens: 1200,
      completionTokens: 300,
      cachedTokens: 1024,
      cacheWriteTokens: 0,
      reasoningTokens: 128,
      source: 'upstream',
    });
  });

  it('reads Responses API usage', () => {
    const usage = normaliseOpenAiUsage({
      input_tokens: 50,
      output_tokens: 20,
      input_tokens_details: { cached_tokens: 10 },
      output_tokens_details: { reasoning_tokens: 5 },
    });
    expect(usage).toMatchObject({
      promptTokens: 50,
      completionTokens: 20,
      cachedTokens: 10,
      reasoningTokens: 5,
    });
  });

  it('reads DeepSeek cache hits and ignores garbage values', () => {
    expect(
      normaliseOpenAiUsage({ prompt_tokens: 100, completion_tokens: 5, prompt_cache_hit_tokens: 64 })
        ?.cachedTokens,
    ).toBe(64);
    expect(normaliseOpenAiUsage({ prompt_tokens: '9', completion_tokens: -3 })).toMatchObject({
      promptTokens: 0,
      completionTokens: 0,
    });
    expect(normaliseOpenAiUsage(null)).toBeUndefined();
  });

  it('clamps details larger than the totals', () => {
    expect(
      normaliseOpenAiUsage({
        prompt_tokens: 10,
        completion_tokens: 1,
        prompt_tokens_details: { cached_tokens: 50 },
      })?.cachedTokens,
    ).toBe(10);
  });
});

describe('normaliseAnthropicUsage', () => {
  it('puts cache reads and writes inside the prompt, so billing counts each once', () => {
    const start = {
      input_tokens: 100,
      cache_read_input_tokens: 1000,
      cache_creation_input_tokens: 2000,
      output_tokens: 1,
    };
    const delta = { output_tokens: 200 };
    const usage = normaliseAnthropicUsage(mergeAnthropicUsage(start, delta));
    expect(usage).toMatchObject({
      promptTokens: 3100,
      completionTokens: 200,
      cachedTokens: 1000,
      cacheWriteTokens: 2000,
    });
    if (!usage) throw new Error('no usage');
    const pricing = {
      kind: 'per-token',
      model: 'claude-3-5-sonnet',
      modelRatio: 1.5,
      completionRatio: 5,
      cacheRatio: 0.1,
      cacheCreationRatio: 1.25,
      cacheCreation1hRatio: 2,
      groupRatio: 1,
      isUnsetRatio: false,
    } as const;
    // (100 + 1000 × 0.1 + 2000 × 1.25 + 200 × 5) × 1.5 = 5550
    expect(settleTokens(pricing, usage, 500_000).quota).toBe(5550);
  });

  // The usage fields of https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching
  // ("Tracking cache performance"): `cache_creation` splits `cache_creation_input_tokens` by cache duration.
  it('reads the 1-hour writes of a message_start that survive a message_delta without them', () => {
    const start = {
      input_tokens: 1000,
      cache_creation_input_tokens: 2000,
      cache_read_input_tokens: 3000,
      cache_creation: { ephemeral_5m_input_tokens: 1500, ephemeral_1h_input_tokens: 500 },
      output_tokens: 1,
    };
    const usage = normaliseAnthropicUsage(mergeAnthropicUsage(start, { output_tokens: 500 }));
    expect(usage).toMatchObject({
      promptTokens: 6000,
      completionTokens: 500,
      cachedTokens: 3000,
      cacheWriteTokens: 2000,
      cacheWrite1hTokens: 500,
    });
  });

  it('takes a later event with the split over an earlier one without it', () => {
    const start = { input_tokens: 10, cache_creation_input_tokens: 0, output_tokens: 1 };
    const delta = {
      cache_creation_input_tokens: 700,
      cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 700 },
      output_tokens: 20,
    };
    expect(normaliseAnthropicUsage(mergeAnthropicUsage(start, delta))).toMatchObject({
      promptTokens: 710,
      cacheWriteTokens: 700,
      cacheWrite1hTokens: 700,
    });
  });

  it('counts writes without the split as 5-minute ones', () => {
    expect(
      normaliseAnthropicUsage({ input_tokens: 5, cache_creation_input_tokens: 40, output_tokens: 2 }),
    ).toMatchObject({ cacheWriteTokens: 40, cacheWrite1hTokens: 0 });
  });
});

describe('hasUsage and toOpenAiUsage', () => {
  it('treats all-zero usage as missing and writes OpenAI usage back', () => {
    expect(hasUsage(normaliseOpenAiUsage({ prompt_tokens: 0, completion_tokens: 0 }))).toBe(false);
    const usage = normaliseOpenAiUsage({
      prompt_tokens: 7,
      completion_tokens: 3,
      prompt_tokens_details: { cached_tokens: 2 },
    });
    expect(hasUsage(usage)).toBe(true);
    if (!usage) throw new Error('no usage');
    expect(toOpenAiUsage(usage)).toMatchObject({
      prompt_tokens: 7,
      completion_tokens: 3,
      total_tokens: 10,
      prompt_tokens_details: { cached_tokens: 2 },
    });
  });

  // https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/web-search-tool ("Usage"): the searches are in
  // `usage.server_tool_use.web_search_requests`; https://docs.anthropic.com/en/api/messages: `usage.service_tier`.
  it('reads the service tier and the web searches of an answer', () => {
    expect(
      normaliseAnthropicUsage({
        input_tokens: 105,
        output_tokens: 6039,
        cache_read_input_tokens: 7123,
        cache_creation_input_tokens: 7345,
        server_tool_use: { web_search_requests: 1 },
        service_tier: 'standard',
      }),
    ).toMatchObject({ promptTokens: 14_573, serviceTier: 'standard', webSearchCalls: 1 });
    expect(normaliseAnthropicUsage({ input_tokens: 5, output_tokens: 2 })).not.toHaveProperty(
      'webSearchCalls',
    );
  });

  it("keeps message_start's service tier and takes message_delta's cumulative searches", () => {
    const start = {
      input_tokens: 2000,
      output_tokens: 1,
      service_tier: 'priority',
      server_tool_use: { web_search_requests: 0 },
    };
    const delta = { input_tokens: 9000, output_tokens: 400, server_tool_use: { web_search_requests: 3 } };
    expect(normaliseAnthropicUsage(mergeAnthropicUsage(start, delta))).toMatchObject({
      promptTokens: 9000,
      completionTokens: 400,
      serviceTier: 'priority',
      webSearchCalls: 3,
    });
  });

  it('ignores a service tier that is not a tier name', () => {
    expect(normaliseAnthropicUsage({ input_tokens: 1, service_tier: 'Priority Tier!' })).not.toHaveProperty(
      'serviceTier',
    );
  });
});
