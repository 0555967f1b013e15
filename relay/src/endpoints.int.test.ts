/**
 * Golden tests of the OpenAI-compatible endpoints beyond chat: each goes through the shared pipeline against the
 * fake upstream speaking OpenAI's wire format, and must hand the client what the upstream sent, charge the right
 * quota exactly once, log the right model and tokens, refund when the upstream fails, and refuse bad input with
 * a 400 in OpenAI's shape that changes no balance.
 */
import { logs, tokens, users } from '@turnpike/core/db/schema/index';
import { eq } from 'drizzle-orm';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeOpenAi, startFakeOpenAi } from './testing/fake-openai.ts';
import { createRelayTestApp, type RelayTestApp } from './testing/relay-test-app.ts';
import { sleep, waitFor } from './testing/wait.ts';

const RATIOS = {
  'instruct-model': 1,
  'text-moderation-latest': 0.5,
  'rerank-model': 0.5,
  'resp-model': 2,
  'ratio-image': 8,
  'tts-1': 7.5,
  'whisper-1': 15,
  'text-embedding-3-small': 0.01,
  'broken-model': 1,
  'broken-image': 8,
  'broken-tts': 1,
  'broken-whisper': 1,
  'retry-whisper': 1,
};
const COMPLETION = { 'instruct-model': 2, 'resp-model': 3 };
const REPLY = 'Hello! This is a reply from the fake OpenAI upstream.';

let t: RelayTestApp;
let fake: FakeOpenAi;
let cohere: FakeOpenAi;
let broken: FakeOpenAi;
let mainChannelId: number;

const db = () => t.runtime.deps.db;
const userQuota = async (id: number) =>
  (await db().select({ quota: users.quota }).from(users).where(eq(users.id, id)))[0]!.quota;
const tokenQuota = async (id: number) =>
  (await db().select({ q: tokens.remainQuota }).from(tokens).where(eq(tokens.id, id)))[0]!.q;
const consumeLog = (requestId: string) =>
  waitFor(async () => (await db().select().from(logs).where(eq(logs.requestId, requestId)))[0]);
const noLog = async (requestId: string) => {
  await sleep(100);
  expect(await db().select().from(logs).where(eq(logs.requestId, requestId))).toEqual([]);
};

async function newCaller(quota = 1_000_000) {
  const user = await t.seedUser({ quota });
  const token = await t.seedToken(user.id, { unlimitedQuota: false, remainQuota: quota });
  return { user, token, auth: { authorization: `Bearer sk-${token.key}` } };
}

const post = (auth: Record<string, string>, url: string, payload: Record<string, unknown>) =>
  t.relay.inject({ method: 'POST', url, headers: auth, payload });

/** A multipart body exactly as fetch would send it. */
async function multipart(form: FormData): Promise<{ body: Buffer; contentType: string }> {
  const request = new Request('http://localhost/', { method: 'POST', body: form });
  return {
    body: Buffer.from(await request.arrayBuffer()),
    contentType: request.headers.get('content-type') as string,
  };
}

const postForm = async (auth: Record<string, string>, url: string, form: FormData) => {
  const { body, contentType } = await multipart(form);
  return t.relay.inject({
    method: 'POST',
    url,
    headers: { ...auth, 'content-type': contentType },
    payload: body,
  });
};

const charged = (response: { headers: Record<string, unknown> }) =>
  Number(response.headers['x-turnpike-quota']);

/** Asserts one charge: the log and both balances (written with it, in one flush) all say `quota`. */
async function expectCharged(
  caller: Awaited<ReturnType<typeof newCaller>>,
  requestId: string,
  quota: number,
  start = 1_000_000,
) {
  const log = await consumeLog(requestId);
  expect(log.quota).toBe(quota);
  expect(await userQuota(caller.user.id)).toBe(start - quota);
  expect(await tokenQuota(caller.token.id)).toBe(start - quota);
  return log;
}

beforeAll(async () => {
  fake = await startFakeOpenAi({ apiKey: 'sk-upstream' });
  cohere = await startFakeOpenAi({ rerankStyle: 'cohere' });
  broken = await startFakeOpenAi({ error: 500 });
  t = await createRelayTestApp();
  const { options } = t.runtime.deps;
  await options.set('ModelRatio', JSON.stringify(RATIOS));
  await options.set('CompletionRatio', JSON.stringify(COMPLETION));
  mainChannelId = (
    await t.seedChannel({
      key: 'sk-upstream',
      baseUrl: fake.url,
      models:
        'instruct-model,text-moderation-latest,rerank-model,resp-model,dall-e-2,dall-e-3,ratio-image,tts-1,whisper-1,text-embedding-3-small',
      modelMapping: { 'ratio-image': 'gpt-image-1' },
    })
  ).id;
  await t.seedChannel({ key: 'sk-x', baseUrl: cohere.url, models: 'cohere-rerank' });
  await options.set('ModelRatio', JSON.stringify({ ...RATIOS, 'cohere-rerank': 1 }));
  await t.seedChannel({
    key: 'sk-x',
    baseUrl: broken.url,
    models: 'broken-model,broken-image,broken-tts,broken-whisper,retry-whisper',
    priority: 10,
  });
  await t.seedChannel({ key: 'sk-upstream', baseUrl: fake.url, models: 'retry-whisper' });
  await t.startRelay();
});

afterAll(async () => {
  await t?.close();
  await Promise.all([fake?.close(), cohere?.close(), broken?.close()]);
});

describe('completions', () => {
  it('relays a non-stream completion and bills prompt + completion × ratio', async () => {
    const caller = await newCaller();
    const response = await post(caller.auth, '/v1/completions', {
      model: 'instruct-model',
      prompt: 'Say this is a test',
      max_tokens: 50,
    });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body).toMatchObject({
      object: 'text_completion',
      choices: [{ text: REPLY, finish_reason: 'stop' }],
    });
    expect(fake.requests.at(-1)!.path).toBe('/v1/completions');
    const quota = body.usage.prompt_tokens + body.usage.completion_tokens * 2;
    expect(charged(response)).toBe(quota);
    const log = await expectCharged(caller, response.headers['x-request-id'] as string, quota);
    expect(log).toMatchObject({
      modelName: 'instruct-model',
      promptTokens: body.usage.prompt_tokens,
      completionTokens: body.usage.completion_tokens,
      isStream: false,
      channelId: mainChannelId,
    });
  });

  it('streams completion chunks as sent and bills the usage chunk', async () => {
    const caller = await newCaller();
    const response = await post(caller.auth, '/v1/completions', {
      model: 'instruct-model',
      prompt: 'Say this is a test',
      stream: true,
    });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toContain('text/event-stream');
    const frames = response.body.split('\n\n').filter(Boolean);
    expect(frames.at(-1)).toBe('data: [DONE]');
    const chunks = frames.filter((f) => f.startsWith('data: {')).map((f) => JSON.parse(f.slice(6)));
    expect(chunks.every((c) => c.object === 'text_completion' && !('usage' in c))).toBe(true);
    expect(chunks.map((c) => c.choices[0]?.text ?? '').join('')).toBe(REPLY);
    const quota = Number(/: x-turnpike-quota: (\d+)/.exec(response.body)![1]);
    const log = await expectCharged(caller, response.headers['x-request-id'] as string, quota);
    expect(log.isStream).toBe(true);
    expect(quota).toBe(log.promptTokens + log.completionTokens * 2);
    expect(JSON.parse(log.other).usage_counted).toBeUndefined();
  });

  it('answers 400 without a prompt and changes no balance', async () => {
    const caller = await newCaller();
    const requests = fake.requests.length;
    const response = await post(caller.auth, '/v1/completions', { model: 'instruct-model' });
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_request' });
    expect(response.json().error.message).toContain('prompt');
    expect(fake.requests.length).toBe(requests);
    expect(await userQuota(caller.user.id)).toBe(1_000_000);
  });

  it('refunds the reservation when the upstream fails', async () => {
    const caller = await newCaller();
    const response = await post(caller.auth, '/v1/completions', {
      model: 'broken-model',
      prompt: 'hi',
      max_tokens: 500,
    });
    expect(response.statusCode).toBe(500);
    expect(response.json().error.message).toContain('The server had an error');
    expect(await userQuota(caller.user.id)).toBe(1_000_000);
    expect(await tokenQuota(caller.token.id)).toBe(1_000_000);
    await noLog(response.headers['x-request-id'] as string);
  });
});

describe('moderations, rerank and embeddings', () => {
  it('moderates with the default model and bills the counted input', async () => {
    const caller = await newCaller();
    const response = await post(caller.auth, '/v1/moderations', { input: 'I want to hug everyone' });
    expect(response.statusCode).toBe(200);
    expect(response.json().results[0].flagged).toBe(false);
    expect((fake.requests.at(-1)!.body as { model: string }).model).toBe('text-moderation-latest');
    const log = await consumeLog(response.headers['x-request-id'] as string);
    expect(log.modelName).toBe('text-moderation-latest');
    expect(log.promptTokens).toBeGreaterThan(3);
    expect(log.quota).toBe(Math.max(1, Math.round(log.promptTokens * 0.5)));
    expect(charged(response)).toBe(log.quota);
    expect((await post(caller.auth, '/v1/moderations', {})).statusCode).toBe(400);
  });

  it('reranks with Jina-style usage from the answer', async () => {
    const caller = await newCaller();
    const response = await post(caller.auth, '/v1/rerank', {
      model: 'rerank-model',
      query: 'what is a turnpike',
      documents: ['a toll road', { text: 'a kind of fish' }, 'a gate'],
      top_n: 2,
    });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body.results).toHaveLength(2);
    expect(body.results[0].document.text).toBe('a toll road');
    const log = await consumeLog(response.headers['x-request-id'] as string);
    expect(log.promptTokens).toBe(body.usage.total_tokens);
    expect(log.quota).toBe(Math.round(body.usage.total_tokens * 0.5));
    expect(JSON.parse(log.other).usage_counted).toBeUndefined();
  });

  it('counts rerank tokens itself when a Cohere-style answer bills search units only', async () => {
    const caller = await newCaller();
    const response = await post(caller.auth, '/v1/rerank', {
      model: 'cohere-rerank',
      query: 'what is a turnpike',
      documents: ['a toll road', 'a gate'],
    });
    expect(response.statusCode).toBe(200);
    expect(response.json().meta.billed_units.search_units).toBe(1);
    const log = await consumeLog(response.headers['x-request-id'] as string);
    expect(log.promptTokens).toBeGreaterThan(5);
    expect(JSON.parse(log.other).usage_counted).toBe(true);
    expect(log.quota).toBe(log.promptTokens);
  });

  it('refuses a rerank without documents', async () => {
    const caller = await newCaller();
    const response = await post(caller.auth, '/v1/rerank', { model: 'rerank-model', query: 'q' });
    expect(response.statusCode).toBe(400);
    expect(response.json().error.message).toContain('documents');
    expect(await userQuota(caller.user.id)).toBe(1_000_000);
  });

  it('takes the model of /v1/engines/:model/embeddings from the path', async () => {
    const caller = await newCaller();
    const response = await post(caller.auth, '/v1/engines/text-embedding-3-small/embeddings', {
      input: 'some text to embed',
    });
    expect(response.statusCode).toBe(200);
    expect(fake.requests.at(-1)!.path).toBe('/v1/embeddings');
    expect((fake.requests.at(-1)!.body as { model: string }).model).toBe('text-embedding-3-small');
    const log = await consumeLog(response.headers['x-request-id'] as string);
    expect(log.modelName).toBe('text-embedding-3-small');
    expect(log.promptTokens).toBe(response.json().usage.prompt_tokens);
  });
});

describe('responses', () => {
  it('relays a response object and bills input, output and cached tokens', async () => {
    fake.setBehaviour({ cachedTokens: 4 });
    try {
      const caller = await newCaller();
      const response = await post(caller.auth, '/v1/responses', {
        model: 'resp-model',
        input: [{ role: 'user', content: 'Tell me a three sentence bedtime story about a unicorn.' }],
      });
      expect(response.statusCode).toBe(200);
      const body = response.json();
      expect(body.object).toBe('response');
      expect(body.output[0].content[0].text).toBe(REPLY);
      const { input_tokens: input, output_tokens: output } = body.usage;
      expect(body.usage.input_tokens_details.cached_tokens).toBe(4);
      // Cached input at the default cache ratio 1 (resp-model has none): billed like other input.
      const quota = (input + output * 3) * 2;
      const log = await expectCharged(caller, response.headers['x-request-id'] as string, quota);
      expect(log).toMatchObject({ promptTokens: input, completionTokens: output, modelName: 'resp-model' });
      expect(JSON.parse(log.other).cache_tokens).toBe(4);
    } finally {
      fake.setBehaviour({ cachedTokens: 0 });
    }
  });

  it('passes response.* events through and bills the usage of response.completed', async () => {
    const caller = await newCaller();
    const response = await post(caller.auth, '/v1/responses', {
      model: 'resp-model',
      input: 'Say hello',
      stream: true,
    });
    expect(response.statusCode).toBe(200);
    const frames = response.body.split('\n\n').filter(Boolean);
    const events = frames.filter((f) => f.startsWith('event: '));
    expect(events[0]).toMatch(/^event: response\.created\ndata: \{"type":"response\.created"/);
    expect(events.at(-1)).toMatch(/^event: response\.completed\n/);
    const deltas = events
      .filter((f) => f.startsWith('event: response.output_text.delta'))
      .map((f) => JSON.parse(f.split('\ndata: ')[1]!).delta);
    expect(deltas.join('')).toBe(REPLY);
    expect(response.body).not.toContain('[DONE]');
    const completed = JSON.parse(events.at(-1)!.split('\ndata: ')[1]!).response.usage;
    const quota = Number(/: x-turnpike-quota: (\d+)/.exec(response.body)![1]);
    expect(quota).toBe((completed.input_tokens + completed.output_tokens * 3) * 2);
    const log = await expectCharged(caller, response.headers['x-request-id'] as string, quota);
    expect(log.isStream).toBe(true);
  });

  it('refuses a response without input', async () => {
    const caller = await newCaller();
    const response = await post(caller.auth, '/v1/responses', { model: 'resp-model' });
    expect(response.statusCode).toBe(400);
    expect(await userQuota(caller.user.id)).toBe(1_000_000);
  });
});

describe('images', () => {
  it('generates with the default model and charges the per-image price', async () => {
    const caller = await newCaller();
    const response = await post(caller.auth, '/v1/images/generations', {
      prompt: 'a white siamese cat',
      n: 2,
      size: '256x256',
    });
    expect(response.statusCode).toBe(200);
    expect(response.json().data).toHaveLength(2);
    expect((fake.requests.at(-1)!.body as { model: string }).model).toBe('dall-e-2');
    // dall-e-2 is $0.02 per 1024x1024 image; 256x256 costs 0.4 of it.
    const quota = Math.round(0.02 * 0.4 * 2 * 500_000);
    expect(charged(response)).toBe(quota);
    const log = await expectCharged(caller, response.headers['x-request-id'] as string, quota);
    expect(log.modelName).toBe('dall-e-2');
    expect(log.content).toContain('size 256x256');
  });

  it('checks and charges one price for a ratio-priced image model', async () => {
    // $0.0025 × ratio 8 = $0.02 per image → 10 000 quota; a balance of 9 999 is refused before the call.
    const poor = await newCaller(9_999);
    const requests = fake.requests.length;
    const refused = await post(poor.auth, '/v1/images/generations', {
      model: 'ratio-image',
      prompt: 'a cat',
    });
    expect(refused.statusCode).toBe(403);
    expect(refused.json().error.code).toBe('insufficient_user_quota');
    expect(fake.requests.length).toBe(requests);
    expect(await userQuota(poor.user.id)).toBe(9_999);

    const caller = await newCaller(10_000);
    const response = await post(caller.auth, '/v1/images/generations', {
      model: 'ratio-image',
      prompt: 'a cat',
    });
    expect(response.statusCode).toBe(200);
    expect(charged(response)).toBe(10_000);
    expect((fake.requests.at(-1)!.body as { model: string }).model).toBe('gpt-image-1');
    await expectCharged(caller, response.headers['x-request-id'] as string, 10_000, 10_000);
  });

  it('applies the dall-e-3 hd surcharge and refuses sizes the model does not make', async () => {
    const caller = await newCaller();
    const bad = await post(caller.auth, '/v1/images/generations', {
      model: 'dall-e-3',
      prompt: 'a cat',
      size: '256x256',
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.message).toContain('1024x1792');
    const response = await post(caller.auth, '/v1/images/generations', {
      model: 'dall-e-3',
      prompt: 'a cat',
      size: '1792x1024',
      quality: 'hd',
    });
    expect(response.statusCode).toBe(200);
    await expectCharged(
      caller,
      response.headers['x-request-id'] as string,
      Math.round(0.04 * 2 * 1.5 * 500_000),
    );
  });

  it('streams an image edit upload to the upstream byte for byte, with the mapped model', async () => {
    const caller = await newCaller();
    const image = Buffer.alloc(300_000);
    for (let i = 0; i < image.length; i += 1) image[i] = (i * 31 + 7) % 256;
    const form = new FormData();
    form.append('image', new Blob([image], { type: 'image/png' }), 'cat.png');
    form.append('prompt', 'give the cat a hat');
    form.append('model', 'ratio-image');
    form.append('size', '1024x1024');
    const response = await postForm(caller.auth, '/v1/images/edits', form);
    expect(response.statusCode).toBe(200);
    expect(response.json().data[0].url).toMatch(/^https:\/\/images\.example\.com\//);
    const sent = fake.requests.at(-1)!;
    expect(sent.path).toBe('/v1/images/edits');
    expect(sent.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    // The file part arrives intact; only the model field's value changed (mapped), and the length with it.
    expect(sent.rawBody.indexOf(image)).toBeGreaterThan(0);
    expect(sent.body as string).toContain('name="model"\r\n\r\ngpt-image-1\r\n');
    expect(sent.body as string).not.toContain('ratio-image');
    expect(sent.body as string).toContain('name="prompt"\r\n\r\ngive the cat a hat\r\n');
    const original = await multipart(form);
    expect(Number(sent.headers['content-length'])).toBe(
      original.body.length + 'gpt-image-1'.length - 'ratio-image'.length,
    );
    expect(sent.rawBody.length).toBe(Number(sent.headers['content-length']));
    await expectCharged(caller, response.headers['x-request-id'] as string, 10_000);
  });

  it('refuses an image edit without an image, and a body that is not multipart', async () => {
    const caller = await newCaller();
    const form = new FormData();
    form.append('prompt', 'a hat');
    const missing = await postForm(caller.auth, '/v1/images/edits', form);
    expect(missing.statusCode).toBe(400);
    expect(missing.json().error.message).toContain('image is required');
    const json = await post(caller.auth, '/v1/images/edits', { prompt: 'a hat' });
    expect(json.statusCode).toBe(400);
    expect(await userQuota(caller.user.id)).toBe(1_000_000);
  });
});

describe('audio', () => {
  it('pipes speech bytes and bills the characters of the input', async () => {
    const caller = await newCaller();
    const input = 'The quick brown fox jumped over the lazy dog.';
    const response = await post(caller.auth, '/v1/audio/speech', { input, voice: 'alloy' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('audio/mpeg');
    expect(
      response.rawPayload.equals(Buffer.concat([Buffer.from('ID3\x04\x00'), Buffer.from(input.repeat(4))])),
    ).toBe(true);
    expect((fake.requests.at(-1)!.body as { model: string }).model).toBe('tts-1');
    const quota = Math.round(input.length * 7.5);
    const log = await expectCharged(caller, response.headers['x-request-id'] as string, quota);
    expect(log).toMatchObject({ modelName: 'tts-1', promptTokens: input.length, completionTokens: 0 });
  });

  const audioForm = (fields: Record<string, string> = {}, bytes = 64_000) => {
    const form = new FormData();
    form.append('file', new Blob([Buffer.alloc(bytes, 1)], { type: 'audio/mpeg' }), 'speech.mp3');
    for (const [name, value] of Object.entries(fields)) form.append(name, value);
    return form;
  };

  it('transcribes with whisper-1 by default and bills the duration the answer reports', async () => {
    const caller = await newCaller();
    const response = await postForm(caller.auth, '/v1/audio/transcriptions', audioForm());
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ text: REPLY, usage: { type: 'duration', seconds: 9 } });
    const sent = fake.requests.at(-1)!.body as string;
    expect(sent).toContain('name="model"\r\n\r\nwhisper-1\r\n');
    // 9 s → ceil(9) × 1000 / 60 = 150 tokens at ratio 15.
    const log = await expectCharged(caller, response.headers['x-request-id'] as string, 150 * 15);
    expect(log).toMatchObject({ modelName: 'whisper-1', promptTokens: 150 });
  });

  it('bills a verbose_json translation by its duration and a plain-text one by the upload size', async () => {
    fake.setBehaviour({ transcriptionUsage: 'none', audioSeconds: 30 });
    try {
      const caller = await newCaller();
      const verbose = await postForm(
        caller.auth,
        '/v1/audio/translations',
        audioForm({ model: 'whisper-1', response_format: 'verbose_json' }),
      );
      expect(verbose.statusCode).toBe(200);
      expect(verbose.json()).toMatchObject({ task: 'translate', duration: 30, text: REPLY });
      expect(fake.requests.at(-1)!.path).toBe('/v1/audio/translations');
      const log = await consumeLog(verbose.headers['x-request-id'] as string);
      expect(log.promptTokens).toBe(500);
      expect(log.quota).toBe(500 * 15);

      // 160 000 bytes at 128 kbit/s ≈ 10 s → 167 tokens.
      const text = await postForm(
        caller.auth,
        '/v1/audio/transcriptions',
        audioForm({ response_format: 'text' }, 160_000),
      );
      expect(text.statusCode).toBe(200);
      expect(text.headers['content-type']).toContain('text/plain');
      expect(text.body).toBe(`${REPLY}\n`);
      const estimated = await consumeLog(text.headers['x-request-id'] as string);
      expect(estimated.promptTokens).toBe(167);
      expect(estimated.content).toContain('estimated from 160000 bytes');
      expect(await userQuota(caller.user.id)).toBe(1_000_000 - 500 * 15 - 167 * 15);
    } finally {
      fake.setBehaviour({ transcriptionUsage: 'duration', audioSeconds: 9 });
    }
  });

  it('sends the same upload again to the next channel when the first one fails', async () => {
    await t.runtime.deps.options.set('RetryTimes', '1');
    try {
      const caller = await newCaller();
      const audio = Buffer.alloc(50_000);
      for (let i = 0; i < audio.length; i += 1) audio[i] = (i * 7) % 251;
      const form = new FormData();
      form.append('file', new Blob([audio]), 'speech.mp3');
      form.append('model', 'retry-whisper');
      const brokenBefore = broken.requests.length;
      const response = await postForm(caller.auth, '/v1/audio/transcriptions', form);
      expect(response.statusCode).toBe(200);
      expect(broken.requests.length).toBe(brokenBefore + 1);
      const sent = fake.requests.at(-1)!;
      expect(sent.rawBody.indexOf(audio)).toBeGreaterThan(0);
      expect(sent.rawBody.equals(broken.requests.at(-1)!.rawBody)).toBe(true);
      const log = await consumeLog(response.headers['x-request-id'] as string);
      expect(JSON.parse(log.other).admin_info.use_channel).toHaveLength(2);
      expect(log.quota).toBe(150);
    } finally {
      await t.runtime.deps.options.set('RetryTimes', '0');
    }
  });

  it('refuses a transcription without a file', async () => {
    const caller = await newCaller();
    const form = new FormData();
    form.append('model', 'whisper-1');
    const response = await postForm(caller.auth, '/v1/audio/transcriptions', form);
    expect(response.statusCode).toBe(400);
    expect(response.json().error.message).toContain('file is required');
    expect(await userQuota(caller.user.id)).toBe(1_000_000);
  });
});

describe('every endpoint', () => {
  const audio = () => {
    const form = new FormData();
    form.append('file', new Blob([Buffer.alloc(32_000, 1)]), 'a.mp3');
    form.append('model', 'broken-whisper');
    return form;
  };
  const image = () => {
    const form = new FormData();
    form.append('image', new Blob([Buffer.alloc(1000, 2)]), 'a.png');
    form.append('model', 'broken-image');
    form.append('prompt', 'a hat');
    return form;
  };
  const failing: [string, Record<string, unknown> | (() => FormData)][] = [
    ['/v1/embeddings', { model: 'broken-model', input: 'text' }],
    ['/v1/moderations', { model: 'broken-model', input: 'text' }],
    ['/v1/rerank', { model: 'broken-model', query: 'q', documents: ['a'] }],
    ['/v1/responses', { model: 'broken-model', input: 'hi', stream: true }],
    ['/v1/images/generations', { model: 'broken-image', prompt: 'a cat', n: 3 }],
    ['/v1/images/edits', image],
    ['/v1/audio/speech', { model: 'broken-tts', input: 'hello there' }],
    ['/v1/audio/transcriptions', audio],
    ['/v1/audio/translations', audio],
  ];

  it.each(failing)('%s refunds everything when the upstream fails', async (url, payload) => {
    // A limited balance below the trust threshold: every request reserves, so a refund is visible.
    const caller = await newCaller(200_000);
    const response =
      typeof payload === 'function'
        ? await postForm(caller.auth, url, payload())
        : await post(caller.auth, url, payload);
    expect(response.statusCode).toBe(500);
    expect(response.json().error.type).toBe('server_error');
    expect(await userQuota(caller.user.id)).toBe(200_000);
    expect(await tokenQuota(caller.token.id)).toBe(200_000);
    await noLog(response.headers['x-request-id'] as string);
  });

  const badInput: [string, Record<string, unknown>, string][] = [
    ['/v1/embeddings', { model: 'text-embedding-3-small' }, 'input'],
    ['/v1/chat/completions', { model: 'instruct-model', messages: [] }, 'messages'],
    ['/v1/completions', { model: 'instruct-model', prompt: 'x', max_tokens: -1 }, 'max_tokens'],
    ['/v1/images/generations', { model: 'dall-e-2' }, 'prompt'],
    ['/v1/images/generations', { prompt: 'x', n: 11 }, 'n must'],
    ['/v1/images/generations', { prompt: 'x', size: '1024×1024' }, 'plain x'],
    ['/v1/audio/speech', { voice: 'alloy' }, 'input'],
    ['/v1/audio/transcriptions', { model: 'whisper-1' }, 'multipart'],
  ];

  it.each(badInput)('%s answers 400 in OpenAI shape for bad input (%j)', async (url, payload, says) => {
    const caller = await newCaller();
    const requests = fake.requests.length;
    const response = await post(caller.auth, url, payload);
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toMatchObject({ type: 'invalid_request_error' });
    expect(response.json().error.message).toContain(says);
    expect(fake.requests.length).toBe(requests);
    expect(await userQuota(caller.user.id)).toBe(1_000_000);
    expect(await tokenQuota(caller.token.id)).toBe(1_000_000);
  });
});

describe('routes the gateway does not relay', () => {
  it('answers 501 api_not_implemented in OpenAI shape', async () => {
    const caller = await newCaller();
    // Files and batches are served (relay/src/files, relay/src/batches); the legacy fine-tunes API is not.
    for (const [method, url] of [
      ['GET', '/v1/fine-tunes'],
      ['POST', '/v1/fine-tunes/ft-1/cancel'],
      ['POST', '/v1/images/variations'],
      ['DELETE', '/v1/models/gpt-4o'],
    ] as const) {
      const response = await t.relay.inject({ method, url, headers: caller.auth });
      expect(response.statusCode, `${method} ${url}`).toBe(501);
      expect(response.json().error.code).toBe('api_not_implemented');
    }
    const anonymous = await t.relay.inject({ method: 'GET', url: '/v1/files' });
    expect(anonymous.statusCode).toBe(401);
  });
});

describe('the openai SDK on the new endpoints', () => {
  let client: OpenAI;
  beforeAll(async () => {
    const address = await t.relay.listen({ port: 0, host: '127.0.0.1' });
    const caller = await newCaller();
    client = new OpenAI({
      apiKey: caller.auth.authorization.slice(7),
      baseURL: `${address}/v1`,
      maxRetries: 0,
    });
  });

  it('streams legacy completions', async () => {
    const stream = await client.completions.create({
      model: 'instruct-model',
      prompt: 'Say hi',
      stream: true,
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.text ?? '';
    expect(text).toBe(REPLY);
  });

  it('reads responses, streamed and not', async () => {
    const response = await client.responses.create({ model: 'resp-model', input: 'Say hi' });
    expect(response.output_text).toBe(REPLY);
    expect(response.usage?.output_tokens).toBeGreaterThan(5);
    const stream = await client.responses.create({ model: 'resp-model', input: 'Say hi', stream: true });
    let text = '';
    let completed: OpenAI.Responses.Response | undefined;
    for await (const event of stream) {
      if (event.type === 'response.output_text.delta') text += event.delta;
      if (event.type === 'response.completed') completed = event.response;
    }
    expect(text).toBe(REPLY);
    expect(completed?.usage?.input_tokens).toBeGreaterThan(0);
  });

  it('uploads audio and images as the SDK encodes them', async () => {
    const transcription = await client.audio.transcriptions.create({
      file: await toFile(Buffer.alloc(48_000, 3), 'speech.mp3', { type: 'audio/mpeg' }),
      model: 'whisper-1',
    });
    expect(transcription.text).toBe(REPLY);
    const edit = await client.images.edit({
      image: await toFile(Buffer.alloc(2_000, 4), 'cat.png', { type: 'image/png' }),
      prompt: 'a hat',
      model: 'ratio-image',
    });
    expect(edit.data?.[0]?.url).toMatch(/^https:/);
    expect(fake.requests.at(-1)!.body as string).toContain('gpt-image-1');
  });

  it('receives speech bytes and moderation results', async () => {
    const speech = await client.audio.speech.create({ model: 'tts-1', voice: 'alloy', input: 'hello' });
    expect(
      Buffer.from(await speech.arrayBuffer())
        .subarray(0, 3)
        .toString(),
    ).toBe('ID3');
    const moderation = await client.moderations.create({ input: 'hello' });
    expect(moderation.results[0]?.flagged).toBe(false);
  });
});
