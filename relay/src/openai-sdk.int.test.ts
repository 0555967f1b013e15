/**
 * The official `openai` npm SDK as the client of a listening relay: what users actually run against the gateway.
 * Chat, streams (iterated chunk by chunk, with the final usage chunk), embeddings (the SDK asks for base64 and
 * decodes it), the model list and retrieve, and errors surfacing as the SDK's typed errors.
 */
import OpenAI, { type APIError } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_FAKE_BEHAVIOUR, type FakeOpenAi, startFakeOpenAi } from './testing/fake-openai.ts';
import { createRelayTestApp, type RelayTestApp, seedFakeModels } from './testing/relay-test-app.ts';

let t: RelayTestApp;
let fake: FakeOpenAi;
let baseURL: string;
let client: OpenAI;

async function newClient(quota = 1_000_000): Promise<OpenAI> {
  const user = await t.seedUser({ quota });
  const token = await t.seedToken(user.id);
  return new OpenAI({ apiKey: `sk-${token.key}`, baseURL, maxRetries: 0 });
}

beforeAll(async () => {
  fake = await startFakeOpenAi({ apiKey: 'sk-upstream' });
  t = await createRelayTestApp();
  await seedFakeModels(t, fake.url);
  const relay = await t.startRelay();
  const address = await relay.listen({ port: 0, host: '127.0.0.1' });
  baseURL = `${address}/v1`;
  client = await newClient();
});

afterAll(async () => {
  await t?.close();
  await fake?.close();
});

describe('the openai SDK against the relay', () => {
  it('creates a chat completion and sees the charged quota header', async () => {
    const { data, response } = await client.chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Say hello' }] })
      .withResponse();
    expect(data.object).toBe('chat.completion');
    expect(data.choices[0]?.message.content).toBe(DEFAULT_FAKE_BEHAVIOUR.reply);
    expect(data.choices[0]?.finish_reason).toBe('stop');
    const usage = data.usage!;
    expect(usage.prompt_tokens).toBeGreaterThan(0);
    expect(Number(response.headers.get('x-turnpike-quota'))).toBe(
      Math.round((usage.prompt_tokens + usage.completion_tokens * 4) * 1.5),
    );
    expect(response.headers.get('x-request-id')).toBeTruthy();
  });

  it('streams chunks and ends with the usage chunk when include_usage is asked', async () => {
    const stream = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'Say hello' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.length).toBeGreaterThan(5);
    expect(chunks.every((c) => c.object === 'chat.completion.chunk')).toBe(true);
    const text = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
    expect(text).toBe(DEFAULT_FAKE_BEHAVIOUR.reply);
    expect(chunks.some((c) => c.choices[0]?.finish_reason === 'stop')).toBe(true);
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage?.completion_tokens).toBeGreaterThan(5);
    expect(last.usage?.total_tokens).toBe(
      (last.usage?.prompt_tokens ?? 0) + (last.usage?.completion_tokens ?? 0),
    );
  });

  it('streams without a usage chunk when none was asked', async () => {
    const stream = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'Say hello' }],
      stream: true,
    });
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe(DEFAULT_FAKE_BEHAVIOUR.reply);
    expect(chunks.every((c) => !c.usage)).toBe(true);
  });

  it('creates embeddings (base64 on the wire, floats for the caller)', async () => {
    const result = await client.embeddings.create({
      model: 'text-embedding-3-small',
      input: ['first text', 'second text'],
    });
    expect(result.data).toHaveLength(2);
    expect(result.data[1]?.index).toBe(1);
    const vector = result.data[0]!.embedding;
    expect(vector).toHaveLength(DEFAULT_FAKE_BEHAVIOUR.embeddingDimensions);
    // The fake's first component is sin(1), sent as a float32.
    expect(vector[0]).toBeCloseTo(Math.sin(1), 5);
    expect(result.usage.prompt_tokens).toBeGreaterThan(0);
    const sent = fake.requests.at(-1)!.body as { encoding_format?: string };
    expect(sent.encoding_format).toBe('base64');
  });

  it('lists and retrieves models', async () => {
    const ids: string[] = [];
    for await (const model of client.models.list()) ids.push(model.id);
    expect(ids).toEqual(expect.arrayContaining(['gpt-4o-mini', 'text-embedding-3-small']));
    const one = await client.models.retrieve('gpt-4o-mini');
    expect(one).toMatchObject({ id: 'gpt-4o-mini', object: 'model' });
    const missing = await client.models.retrieve('no-such-model').catch((error: unknown) => error);
    expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
  });

  it('surfaces gateway errors as the typed SDK errors with their status and code', async () => {
    const stranger = new OpenAI({ apiKey: 'sk-notakeynotakeynotakey', baseURL, maxRetries: 0 });
    const unauthorized = await stranger.chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })
      .catch((error: unknown) => error);
    expect(unauthorized).toBeInstanceOf(OpenAI.AuthenticationError);
    expect((unauthorized as APIError).status).toBe(401);
    expect((unauthorized as APIError).code).toBe('invalid_api_key');

    const poor = await newClient(10);
    const refused = await poor.chat.completions
      .create({ model: 'gpt-4o-mini', max_tokens: 500, messages: [{ role: 'user', content: 'hi' }] })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect((refused as APIError).code).toBe('insufficient_user_quota');
    expect((refused as APIError).requestID).toBeTruthy();
  });

  it('surfaces the per-user rate limit as a RateLimitError', async () => {
    const { options } = t.runtime.deps;
    await options.set('ModelRequestRateLimitEnabled', 'true');
    await options.set('ModelRequestRateLimitCount', '1');
    try {
      const limited = await newClient();
      const body = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: 'hi' }] };
      await limited.chat.completions.create(body);
      const error = await limited.chat.completions.create(body).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.RateLimitError);
      expect((error as APIError).status).toBe(429);
      expect((error as APIError).code).toBe('rate_limit_exceeded');
      expect((error as APIError).message).toContain('at most 1 requests per 1 minute');
    } finally {
      await options.set('ModelRequestRateLimitEnabled', 'false');
    }
  });
});
