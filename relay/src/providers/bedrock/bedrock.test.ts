import { describe, expect, it } from 'vitest';
import { bedrockChunk } from '../../testing/fake-clouds.ts';
import type { UpstreamBody } from '../../upstream/client.ts';
import { converseUsageOf } from './converse.ts';
import { readBedrockKey } from './credentials.ts';
import { readBedrockError } from './errors.ts';
import { eventStreamToSse } from './event-stream.ts';
import { bedrockModelId } from './provider.ts';

const bodyOf = (pieces: Uint8Array[]): UpstreamBody => ({
  async *[Symbol.asyncIterator]() {
    for (const piece of pieces) yield piece;
  },
  ended: true,
});

async function textOf(body: UpstreamBody): Promise<string> {
  let text = '';
  for await (const piece of body) text += Buffer.from(piece).toString('utf8');
  return text;
}

describe('Bedrock', () => {
  it('reads an access key pair with its region, or an API key with the region of the key or of other', () => {
    expect(readBedrockKey('AK|SK|eu-west-1', '')).toEqual({
      kind: 'sigv4',
      accessKeyId: 'AK',
      secretAccessKey: 'SK',
      region: 'eu-west-1',
    });
    expect(readBedrockKey('ABSKxyz|ap-northeast-1', '')).toEqual({
      kind: 'api-key',
      apiKey: 'ABSKxyz',
      region: 'ap-northeast-1',
    });
    expect(readBedrockKey('ABSKxyz', 'us-east-2')).toMatchObject({ region: 'us-east-2' });
    expect(readBedrockKey('a|b|c|d', '')).toMatch(/AccessKey\|SecretKey\|Region/);
  });

  it("names Claude models by Bedrock's ids and keeps inference profiles and given ids", () => {
    expect(bedrockModelId('claude-3-haiku-20240307')).toBe('anthropic.claude-3-haiku-20240307-v1:0');
    expect(bedrockModelId('claude-3-5-sonnet-20241022')).toBe('anthropic.claude-3-5-sonnet-20241022-v2:0');
    for (const id of [
      'us.anthropic.claude-3-7-sonnet-20250219-v1:0',
      'eu.anthropic.claude-3-5-sonnet-20240620-v1:0',
      'apac.anthropic.claude-3-5-sonnet-20241022-v2:0',
      'anthropic.claude-3-opus-20240229-v1:0',
    ])
      expect(bedrockModelId(id)).toBe(id);
  });

  it('re-frames the binary event stream as SSE, messages split across pieces and joined in one', async () => {
    const start = bedrockChunk({ type: 'message_start', message: { id: 'm', usage: { input_tokens: 3 } } });
    const delta = bedrockChunk({
      type: 'content_block_delta',
      index: 0,
      delta: { type: 'text_delta', text: 'hé' },
    });
    const stop = bedrockChunk({ type: 'message_stop' });
    const joined = Buffer.concat([delta.subarray(5), stop]);
    const text = await textOf(
      eventStreamToSse(bodyOf([start.subarray(0, 3), start.subarray(3), delta.subarray(0, 5), joined])),
    );
    expect(text).toBe(
      [
        'event: message_start\ndata: {"type":"message_start","message":{"id":"m","usage":{"input_tokens":3}}}\n\n',
        'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hé"}}\n\n',
        'event: message_stop\ndata: {"type":"message_stop"}\n\n',
      ].join(''),
    );
  });

  it('classifies errors by x-amzn-ErrorType: throttling busy, access denied and bad signatures the credential', () => {
    const read = (type: string, status: number) =>
      readBedrockError(status, JSON.stringify({ message: 'm' }), {
        'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/`,
      });
    expect(read('ThrottlingException', 429)).toMatchObject({
      status: 429,
      type: 'rate_limit_error',
      code: 'ThrottlingException',
    });
    expect(read('AccessDeniedException', 403)).toMatchObject({ status: 403, type: 'permission_error' });
    expect(read('InvalidSignatureException', 403)).toMatchObject({
      status: 401,
      type: 'authentication_error',
    });
    expect(read('ValidationException', 400)).toMatchObject({
      status: 400,
      type: 'invalid_request_error',
      message: 'ValidationException: m',
    });
    expect(read('ServiceUnavailableException', 503)).toMatchObject({ status: 503 });
  });

  // TokenUsage and CacheDetail: https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_TokenUsage.html
  // (`cacheDetails`: the writes by TTL, `1h` before `5m`; `inputTokens` excludes the cache).
  it('reads the 1-hour cache writes of a Converse usage from its cacheDetails, or none without them', () => {
    const usage = {
      inputTokens: 1000,
      outputTokens: 500,
      totalTokens: 7500,
      cacheReadInputTokens: 3000,
      cacheWriteInputTokens: 2000,
      cacheDetails: [
        { ttl: '1h', inputTokens: 1200 },
        { ttl: '5m', inputTokens: 800 },
      ],
    };
    expect(converseUsageOf(usage)).toMatchObject({
      promptTokens: 6000,
      cachedTokens: 3000,
      cacheWriteTokens: 2000,
      cacheWrite1hTokens: 1200,
    });
    const { cacheDetails: _details, ...older } = usage;
    expect(converseUsageOf(older)).toMatchObject({ cacheWriteTokens: 2000, cacheWrite1hTokens: 0 });
  });
});
