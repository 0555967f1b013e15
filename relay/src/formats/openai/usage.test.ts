/**
 * What OpenAI answers report beside their tokens, in the shapes of https://platform.openai.com/docs/api-reference
 * (`service_tier` of a chat completion, a chunk and a Responses object; `web_search_call` and
 * `image_generation_call` output items) and https://platform.openai.com/docs/guides/tools-web-search.
 */
import { describe, expect, it } from 'vitest';
import { openAiAnswerUsage } from './usage.ts';

const usage = { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 };

describe('openAiAnswerUsage', () => {
  it('reads the service tier a chat completion was served at', () => {
    expect(openAiAnswerUsage({ model: 'gpt-5-2025-08-07', service_tier: 'priority', usage })).toMatchObject({
      promptTokens: 100,
      completionTokens: 20,
      serviceTier: 'priority',
    });
    expect(openAiAnswerUsage({ model: 'gpt-5', usage })).not.toHaveProperty('serviceTier');
  });

  it('counts one web search call for an answer of a search model, none for another model', () => {
    expect(openAiAnswerUsage({ model: 'gpt-4o-search-preview-2025-03-11', usage })).toMatchObject({
      webSearchCalls: 1,
    });
    expect(openAiAnswerUsage({ model: 'gpt-4o-mini-search-preview', usage })).toMatchObject({
      webSearchCalls: 1,
    });
    expect(openAiAnswerUsage({ model: 'gpt-4o', usage })).not.toHaveProperty('webSearchCalls');
  });

  it('counts the web search calls and images of a Responses answer', () => {
    const answer = {
      object: 'response',
      model: 'gpt-5',
      service_tier: 'flex',
      output: [
        { type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search', query: 'a' } },
        { type: 'web_search_call', id: 'ws_2', status: 'completed', action: { type: 'search', query: 'b' } },
        { type: 'image_generation_call', id: 'ig_1', status: 'completed', result: 'iVBOR' },
        { type: 'message', id: 'msg_1', role: 'assistant', content: [] },
      ],
      usage: { input_tokens: 300, output_tokens: 50, total_tokens: 350 },
    };
    expect(openAiAnswerUsage(answer)).toMatchObject({
      promptTokens: 300,
      serviceTier: 'flex',
      webSearchCalls: 2,
      imageCount: 1,
    });
  });

  it('has nothing to bill without a usage object', () => {
    expect(openAiAnswerUsage({ model: 'gpt-4o-search-preview', service_tier: 'priority' })).toBeUndefined();
  });
});
