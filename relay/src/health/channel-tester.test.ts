import { describe, expect, it } from 'vitest';
import type { RelayChannel } from '../state/channel-cache.ts';
import {
  buildTestRequest,
  chooseTestModel,
  FALLBACK_TEST_MODEL,
  isEmbeddingModel,
  testTokenLimit,
  untestableReason,
} from './channel-tester.ts';

const channel = (fields: Partial<RelayChannel> = {}): RelayChannel => ({
  id: 1,
  other: '',
  name: 'c',
  type: 1,
  key: 'sk-x',
  baseUrl: 'http://upstream.test',
  status: 1,
  autoBan: true,
  modelMapping: {},
  statusCodeMapping: undefined,
  paramOverride: undefined,
  headers: {},
  organization: undefined,
  ...fields,
});

describe('the test model', () => {
  it('is the one asked for, then the test model, then the first model, then gpt-4o-mini', () => {
    const row = { testModel: 'gpt-4.1', models: 'gpt-4o, o3-mini' };
    expect(chooseTestModel(row, 'o3-mini')).toBe('o3-mini');
    expect(chooseTestModel(row)).toBe('gpt-4.1');
    expect(chooseTestModel({ testModel: '  ', models: ' gpt-4o , o3-mini' })).toBe('gpt-4o');
    expect(chooseTestModel({ testModel: null, models: '' })).toBe(FALLBACK_TEST_MODEL);
    expect(chooseTestModel({ testModel: null, models: '' }, '   ')).toBe('gpt-4o-mini');
  });
});

describe('the test request', () => {
  it('asks a chat model for a tiny non-stream answer to "hi", mapped model upstream', () => {
    const request = buildTestRequest(channel({ modelMapping: { 'gpt-4o': 'gpt-4o-2024-08-06' } }), 'gpt-4o');
    expect(request).toEqual({
      endpoint: 'chat',
      model: 'gpt-4o',
      upstreamModel: 'gpt-4o-2024-08-06',
      body: {
        model: 'gpt-4o-2024-08-06',
        messages: [{ role: 'user', content: 'hi' }],
        stream: false,
        max_tokens: 10,
      },
    });
  });

  it('uses the embeddings endpoint for embedding models and M3E channels', () => {
    expect(buildTestRequest(channel(), 'text-embedding-3-small')).toMatchObject({
      endpoint: 'embeddings',
      body: { model: 'text-embedding-3-small', input: ['hi'] },
    });
    for (const model of ['bge-m3', 'm3e-base', 'nomic-embed-text'])
      expect(isEmbeddingModel(model, 1)).toBe(true);
    expect(isEmbeddingModel('anything', 44)).toBe(true);
    expect(isEmbeddingModel('gpt-4o', 1)).toBe(false);
  });

  it('follows the completion-limit rules of reasoning, thinking and Gemini models', () => {
    expect(testTokenLimit('o1-mini')).toEqual({ max_completion_tokens: 10 });
    expect(testTokenLimit('o3-mini')).toEqual({ max_completion_tokens: 10 });
    expect(testTokenLimit('gpt-5')).toEqual({ max_completion_tokens: 10 });
    expect(testTokenLimit('deepseek-r1-thinking')).toEqual({ max_tokens: 50 });
    expect(testTokenLimit('claude-3-7-sonnet-thinking')).toEqual({ max_tokens: 10 });
    expect(testTokenLimit('gemini-2.0-flash')).toEqual({ max_tokens: 300 });
    expect(testTokenLimit('gpt-4o-mini')).toEqual({ max_tokens: 10 });
  });
});

describe('untestable channel types', () => {
  it('names Midjourney and Suno, and types without an adapter', () => {
    expect(untestableReason(2)).toMatch(/Midjourney/);
    expect(untestableReason(5)).toMatch(/Midjourney/);
    expect(untestableReason(36)).toMatch(/Suno/);
    // PaLM 2 (type 11) is retired, and says why; Spark (18), Anthropic (14), Gemini (24), Baidu (15) have providers.
    expect(untestableReason(11)).toMatch(/cannot be tested yet: Google retired PaLM 2.*Gemini \(24\)/);
    expect(untestableReason(18)).toBeUndefined();
    expect(untestableReason(15)).toBeUndefined();
    expect(untestableReason(1)).toBeUndefined();
    expect(untestableReason(14)).toBeUndefined();
    expect(untestableReason(24)).toBeUndefined();
  });
});
