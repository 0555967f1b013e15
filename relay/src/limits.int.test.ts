/**
 * Tokens per minute, requests per minute and concurrency limits through a real relay (docs/adr/0028): per user,
 * group, token, model and channel; the 429 in each client's protocol with its headers; slots released on every
 * ending; token limits corrected with the real usage; refusals in `/metrics`. The official SDKs are the clients.
 */
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import { channels, tokens } from '@turnpike/core/db/schema/index';
import { eq } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { readSample } from './metrics/prometheus-text.ts';
import { type FakeOpenAi, startFakeOpenAi } from './testing/fake-openai.ts';
import { createRelayTestApp, type RelayTestApp } from './testing/relay-test-app.ts';
import { sleep, waitFor } from './testing/wait.ts';

let t: RelayTestApp;
let fake: FakeOpenAi;
let relay: FastifyInstance;
let address: string;
let limitedChannels: number[] = [];
let oneAtATime: number[] = [];

beforeAll(async () => {
  fake = await startFakeOpenAi();
  t = await createRelayTestApp();
  const { options } = t.runtime.deps;
  await options.set(
    'ModelRatio',
    JSON.stringify({ 'gpt-4o-mini': 1, 'model-b': 1, 'two-channel-model': 1, 'retry-model': 1 }),
  );
  await t.seedChannel({
    key: 'sk-upstream',
    baseUrl: fake.url,
    models: 'gpt-4o-mini,model-b',
    group: 'default,vip',
  });
  // Two channels of one model, each allowed one request per minute.
  const first = await t.seedChannel({ key: 'sk-upstream', baseUrl: fake.url, models: 'two-channel-model' });
  const second = await t.seedChannel({ key: 'sk-upstream', baseUrl: fake.url, models: 'two-channel-model' });
  limitedChannels = [first.id, second.id];
  for (const id of limitedChannels)
    await t.runtime.deps.db.update(channels).set({ rpmLimit: 1 }).where(eq(channels.id, id));
  // Two channels of another model, each serving one request at a time.
  const third = await t.seedChannel({ key: 'sk-upstream', baseUrl: fake.url, models: 'retry-model' });
  const fourth = await t.seedChannel({ key: 'sk-upstream', baseUrl: fake.url, models: 'retry-model' });
  oneAtATime = [third.id, fourth.id];
  for (const id of oneAtATime)
    await t.runtime.deps.db.update(channels).set({ concurrencyLimit: 1 }).where(eq(channels.id, id));
  relay = await t.startRelay();
  address = await relay.listen({ port: 0, host: '127.0.0.1' });
});

afterEach(async () => {
  fake.setBehaviour({ error: undefined, chunkDelayMs: 0, headersDelayMs: 0 });
  const { options } = t.runtime.deps;
  await options.set('RateLimitUserDefault', '{}');
  await options.set('RateLimitGroups', '{}');
  await options.set('RateLimitModels', '{}');
});

afterAll(async () => {
  await t?.close();
  await fake?.close();
});

/** A new user and token with these limit columns; its key. */
async function newToken(
  limits: { rpmLimit?: number; tpmLimit?: number; concurrencyLimit?: number } = {},
  group?: string,
): Promise<string> {
  const user = await t.seedUser({ quota: 100_000_000, ...(group ? { group } : {}) });
  const token = await t.seedToken(user.id);
  if (Object.keys(limits).length > 0)
    await t.runtime.deps.db.update(tokens).set(limits).where(eq(tokens.id, token.id));
  return `sk-${token.key}`;
}

const post = (key: string, body: Record<string, unknown>, init: RequestInit = {}) =>
  fetch(`${address}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], ...body }),
    ...init,
  });

const openai = (key: string) => new OpenAI({ apiKey: key, baseURL: `${address}/v1`, maxRetries: 0 });

async function metric(labels: Record<string, string>): Promise<number> {
  const text = await (await fetch(`${address}/metrics`)).text();
  return readSample(text, 'turnpike_relay_rate_limited_total', labels) ?? 0;
}

describe('tokens per minute', () => {
  it('charges the estimate at admission and corrects it with the real usage', async () => {
    const key = await newToken({ tpmLimit: 1000 });
    const before = await metric({ scope: 'token', kind: 'tokens' });
    // About 910 tokens estimated (the prompt and max_tokens); the answer uses a few dozen.
    const first = await post(key, { max_tokens: 900 });
    expect(first.status).toBe(200);
    const { usage } = (await first.json()) as { usage: { total_tokens: number } };
    expect(usage.total_tokens).toBeLessThan(90);
    // Only the real usage is left in the window, so a second request of the same size fits.
    await waitFor(async () => {
      const next = await post(key, { max_tokens: 900 });
      if (next.status === 200) return true;
      await next.text();
      return undefined;
    }, 2000);
    // Two answers are in the window: asking for 990 more does not fit.
    const refused = await post(key, { max_tokens: 990 });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('x-ratelimit-limit-tokens')).toBe('1000');
    const remaining = Number(refused.headers.get('x-ratelimit-remaining-tokens'));
    expect(remaining).toBeGreaterThan(800);
    expect(remaining).toBeLessThan(1000);
    expect(refused.headers.get('x-ratelimit-reset-tokens')).toMatch(/^\d+(ms|s|m\d+s)$/);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    const { error } = (await refused.json()) as { error: { type: string; code: string; message: string } };
    expect(error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limit_exceeded' });
    expect(error.message).toContain('at most 1000 tokens per minute for this token');
    expect(await metric({ scope: 'token', kind: 'tokens' })).toBe(before + 1);
  });

  it('refuses a request larger than the limit itself, saying it can never pass', async () => {
    const key = await newToken({ tpmLimit: 500 });
    const upstreamCalls = fake.requests.length;
    const refused = await post(key, { max_tokens: 5000 });
    expect(refused.status).toBe(429);
    const { error } = (await refused.json()) as { error: { message: string } };
    expect(error.message).toMatch(/request too large: it needs about 50\d\d tokens/);
    expect(fake.requests.length).toBe(upstreamCalls);
  });
});

describe('concurrent requests', () => {
  it('refuses a second request while the first streams, and frees the slot when it ends', async () => {
    const key = await newToken({ concurrencyLimit: 1 });
    fake.setBehaviour({ chunkDelayMs: 150 });
    const streaming = await post(key, { stream: true });
    expect(streaming.status).toBe(200);
    const before = await metric({ scope: 'token', kind: 'concurrency' });
    const refused = await post(key, {});
    expect(refused.status).toBe(429);
    expect(refused.headers.get('x-ratelimit-limit-concurrency')).toBe('1');
    expect(refused.headers.get('x-ratelimit-remaining-concurrency')).toBe('0');
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(((await refused.json()) as { error: { message: string } }).error.message).toContain(
      'at most 1 requests at a time for this token',
    );
    expect(await metric({ scope: 'token', kind: 'concurrency' })).toBe(before + 1);
    expect(await streaming.text()).toContain('data: [DONE]');
    fake.setBehaviour({ chunkDelayMs: 0 });
    await waitFor(async () => ((await post(key, {})).status === 200 ? true : undefined), 2000);
  });

  it('frees the slot of a client that leaves mid-stream', async () => {
    const key = await newToken({ concurrencyLimit: 1 });
    fake.setBehaviour({ chunkDelayMs: 300 });
    const controller = new AbortController();
    const streaming = await post(key, { stream: true }, { signal: controller.signal });
    const reader = streaming.body!.getReader();
    await reader.read();
    expect((await post(key, {})).status).toBe(429);
    controller.abort();
    fake.setBehaviour({ chunkDelayMs: 0 });
    await waitFor(async () => ((await post(key, {})).status === 200 ? true : undefined), 3000);
  });

  it("frees a channel's slot as soon as its attempt fails, while another channel answers the retry", async () => {
    const { options } = t.runtime.deps;
    await options.set('RetryTimes', '1');
    try {
      const key = await newToken();
      fake.setBehaviour({ error: 500, errorTimes: 1, chunkDelayMs: 150 });
      // The first attempt fails; the retry streams slowly from the other channel.
      const retried = await post(key, { model: 'retry-model', stream: true });
      expect(retried.status).toBe(200);
      // Meanwhile the failed channel has its one slot back and serves another request.
      const meanwhile = await post(key, { model: 'retry-model' });
      expect(meanwhile.status).toBe(200);
      await meanwhile.text();
      // Both slots taken at once: a third request finds no channel with room.
      const streaming = await post(key, { model: 'retry-model', stream: true });
      expect(streaming.status).toBe(200);
      const third = await post(key, { model: 'retry-model' });
      expect(third.status).toBe(429);
      expect(third.headers.get('x-ratelimit-limit-concurrency')).toBe('1');
      expect(await retried.text()).toContain('data: [DONE]');
      expect(await streaming.text()).toContain('data: [DONE]');
    } finally {
      await options.set('RetryTimes', '0');
    }
  });

  it('frees the slot when the upstream fails', async () => {
    const key = await newToken({ concurrencyLimit: 1 });
    fake.setBehaviour({ error: 500 });
    const failed = await post(key, {});
    expect(failed.status).toBe(500);
    await failed.text();
    fake.setBehaviour({ error: undefined });
    expect((await post(key, {})).status).toBe(200);
    expect((await post(key, {})).status).toBe(200);
  });
});

describe('scopes', () => {
  it("limits each user of a group by the group's entry, others by the default", async () => {
    const { options } = t.runtime.deps;
    await options.set('RateLimitGroups', JSON.stringify({ vip: { rpm: 1 } }));
    await options.set('RateLimitUserDefault', JSON.stringify({ rpm: 2 }));
    const vip = await newToken({}, 'vip');
    expect((await post(vip, {})).status).toBe(200);
    const refused = await post(vip, {});
    expect(refused.status).toBe(429);
    expect(refused.headers.get('x-ratelimit-limit-requests')).toBe('1');
    expect(((await refused.json()) as { error: { message: string } }).error.message).toContain(
      'each user of the group vip',
    );
    // Another vip user has a count of their own.
    expect((await post(await newToken({}, 'vip'), {})).status).toBe(200);
    const plain = await newToken();
    expect((await post(plain, {})).status).toBe(200);
    expect((await post(plain, {})).status).toBe(200);
    const third = await post(plain, {});
    expect(third.status).toBe(429);
    expect(((await third.json()) as { error: { message: string } }).error.message).toContain('for this user');
  });

  it('limits a model across every caller', async () => {
    await t.runtime.deps.options.set('RateLimitModels', JSON.stringify({ 'model-b': { rpm: 2 } }));
    const one = await newToken();
    const two = await newToken();
    expect((await post(one, { model: 'model-b' })).status).toBe(200);
    expect((await post(two, { model: 'model-b' })).status).toBe(200);
    const before = await metric({ scope: 'model', kind: 'requests' });
    await expect(
      openai(one).chat.completions.create({ model: 'model-b', messages: [{ role: 'user', content: 'hi' }] }),
    ).rejects.toSatisfy(
      (error) =>
        error instanceof OpenAI.RateLimitError &&
        error.message.includes('requests per minute for the model model-b'),
    );
    expect(await metric({ scope: 'model', kind: 'requests' })).toBe(before + 1);
    // Another model is not affected.
    expect((await post(two, {})).status).toBe(200);
  });

  it('passes over a channel at its limit to another, and answers 429 when none has room', async () => {
    const key = await newToken();
    const upstreamCalls = fake.requests.length;
    const body = { model: 'two-channel-model' };
    expect((await post(key, body)).status).toBe(200);
    expect((await post(key, body)).status).toBe(200);
    const refused = await post(key, body);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('x-ratelimit-limit-requests')).toBe('1');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    const { error } = (await refused.json()) as { error: { message: string; type: string } };
    expect(error.type).toBe('rate_limit_error');
    expect(error.message).toMatch(/at most 1 requests per minute for the channel \d+/);
    // Each channel served exactly one: the third request reached no upstream.
    expect(fake.requests.length).toBe(upstreamCalls + 2);
  });
});

describe('the answer in each protocol', () => {
  it("answers an Anthropic client in Anthropic's shape with its anthropic-ratelimit headers", async () => {
    const key = await newToken({ rpmLimit: 1 });
    const anthropic = new Anthropic({ apiKey: key, baseURL: address, maxRetries: 0 });
    const ask = () =>
      anthropic.messages.create({
        model: 'gpt-4o-mini',
        max_tokens: 50,
        messages: [{ role: 'user', content: 'hi' }],
      });
    await ask();
    const refused = await ask().catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(Anthropic.RateLimitError);
    const error = refused as InstanceType<typeof Anthropic.RateLimitError>;
    expect(error.error).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } });
    expect(error.headers?.get('anthropic-ratelimit-requests-limit')).toBe('1');
    expect(error.headers?.get('anthropic-ratelimit-requests-remaining')).toBe('0');
    expect(error.headers?.get('anthropic-ratelimit-requests-reset')).toMatch(/Z$/);
    expect(error.headers?.get('x-ratelimit-limit-requests')).toBe('1');
    expect(error.headers?.get('retry-after')).toBeTruthy();
  });

  it("answers a Gemini client in Gemini's shape", async () => {
    const key = await newToken({ rpmLimit: 1 });
    const gemini = new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: address } });
    const ask = () => gemini.models.generateContent({ model: 'gpt-4o-mini', contents: 'hi' });
    await ask();
    const refused = (await ask().catch((error: unknown) => error)) as { status?: number; message?: string };
    expect(refused.status).toBe(429);
    expect(refused.message).toContain('RESOURCE_EXHAUSTED');
  });
});

it('keeps no slot of a stream past its end, however many streams ran', async () => {
  const key = await newToken({ concurrencyLimit: 3 });
  const answers = await Promise.all(
    Array.from({ length: 3 }, () => post(key, { stream: true }).then((r) => r.text())),
  );
  for (const text of answers) expect(text).toContain('data: [DONE]');
  await sleep(50);
  const again = await Promise.all(Array.from({ length: 3 }, () => post(key, {}).then((r) => r.status)));
  expect(again).toEqual([200, 200, 200]);
});
