/**
 * Streams and the answer-side rules: keep-alive pings, the stream timeout, the optional retries of an empty 200
 * and of a first-token timeout, sensitive words on prompts and completions, and the console playground.
 */
import type { AddressInfo } from 'node:net';
import { buildApp } from '@turnpike/api';
import { hashPassword } from '@turnpike/core/crypto/password';
import { logs, users } from '@turnpike/core/db/schema/index';
import { createSessionCodec } from '@turnpike/core/sessions/session-codec';
import { registerRelay } from '@turnpike/relay';
import { type FakeOpenAi, startFakeOpenAi } from '@turnpike/relay/testing/fake-openai';
import { waitFor } from '@turnpike/relay/testing/wait';
import { eq } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRelayTestApp, type RelayTestApp } from '../testing/all-test-app.ts';
import { ConsoleClient } from '../testing/test-app.ts';

const REPLY = 'Hello! This is a reply from the fake OpenAI upstream.';

let t: RelayTestApp;
let fake: FakeOpenAi;
let fakeEmpty: FakeOpenAi;
let fakeSlow: FakeOpenAi;
let mainChannelId: number;
let emptyChannelId: number;
let slowChannelId: number;

const db = () => t.runtime.deps.db;
const options = () => t.runtime.deps.options;
const userQuota = async (id: number) =>
  (await db().select({ quota: users.quota }).from(users).where(eq(users.id, id)))[0]!.quota;
const consumeLog = (requestId: string) =>
  waitFor(async () => (await db().select().from(logs).where(eq(logs.requestId, requestId)))[0]);

async function newCaller(quota = 1_000_000) {
  const user = await t.seedUser({ quota });
  const token = await t.seedToken(user.id, { unlimitedQuota: false, remainQuota: quota });
  return { user, token, auth: { authorization: `Bearer sk-${token.key}` } };
}

const chat = (auth: Record<string, string>, body: Record<string, unknown>) =>
  t.relay.inject({ method: 'POST', url: '/v1/chat/completions', headers: auth, payload: body });

const hi = [{ role: 'user', content: 'hi' }];

/** The data events of an SSE body, parsed (comments and [DONE] left out). */
const dataEvents = (body: string) =>
  body
    .split('\n\n')
    .filter((frame) => frame.startsWith('data: {'))
    .map((frame) => JSON.parse(frame.slice(6)));
const streamedText = (body: string) =>
  dataEvents(body)
    .map((chunk) => chunk.choices?.[0]?.delta?.content ?? '')
    .join('');
const quotaComment = (body: string) => Number(/: x-turnpike-quota: (\d+)/.exec(body)![1]);

async function withOptions(values: Record<string, string>, run: () => Promise<void>) {
  const before = Object.fromEntries(Object.keys(values).map((key) => [key, options().getText(key as never)]));
  for (const [key, value] of Object.entries(values)) await options().set(key as never, value);
  try {
    await run();
  } finally {
    for (const [key, value] of Object.entries(before)) await options().set(key as never, value);
  }
}

beforeAll(async () => {
  fake = await startFakeOpenAi();
  fakeEmpty = await startFakeOpenAi({ emptyReply: true, omitUsage: true });
  fakeSlow = await startFakeOpenAi({ firstTokenDelayMs: 2500 });
  t = await createRelayTestApp();
  await options().set(
    'ModelRatio',
    JSON.stringify({ 'chat-model': 1, 'empty-model': 1, 'slow-model': 1, 'vip-model': 1 }),
  );
  mainChannelId = (
    await t.seedChannel({ key: 'sk-a', baseUrl: fake.url, models: 'chat-model,empty-model,slow-model' })
  ).id;
  await t.seedChannel({ key: 'sk-a', baseUrl: fake.url, models: 'chat-model', group: 'vip' });
  await t.seedChannel({ key: 'sk-a', baseUrl: fake.url, models: 'chat-model', group: 'team-x' });
  emptyChannelId = (
    await t.seedChannel({ key: 'sk-b', baseUrl: fakeEmpty.url, models: 'empty-model', priority: 10 })
  ).id;
  slowChannelId = (
    await t.seedChannel({ key: 'sk-c', baseUrl: fakeSlow.url, models: 'slow-model', priority: 10 })
  ).id;
  await t.startRelay();
});

afterAll(async () => {
  await t?.close();
  await Promise.all([fake?.close(), fakeEmpty?.close(), fakeSlow?.close()]);
});

describe('keep-alive and the stream timeout', () => {
  it('sends : PING while the first token is slow when pings are on, and none when off', async () => {
    fake.setBehaviour({ firstTokenDelayMs: 2300 });
    try {
      const { auth } = await newCaller();
      await withOptions(
        { 'general_setting.ping_interval_enabled': 'true', 'general_setting.ping_interval_seconds': '1' },
        async () => {
          const response = await chat(auth, { model: 'chat-model', stream: true, messages: hi });
          expect(response.statusCode).toBe(200);
          const frames = response.body.split('\n\n');
          const firstPing = frames.indexOf(': PING');
          const firstContent = frames.findIndex((f) => f.includes('"content":"Hello!"'));
          expect(firstPing).toBeGreaterThan(-1);
          expect(firstPing).toBeLessThan(firstContent);
          expect(streamedText(response.body)).toBe(REPLY);
        },
      );
      const quiet = await chat(auth, { model: 'chat-model', stream: true, messages: hi });
      expect(quiet.body).not.toContain(': PING');
    } finally {
      fake.setBehaviour({ firstTokenDelayMs: 0 });
    }
  });

  it('sends : PING between slow chunks too', async () => {
    fake.setBehaviour({ chunkDelayMs: 1300, reply: 'one two three' });
    try {
      const { auth } = await newCaller();
      await withOptions(
        { 'general_setting.ping_interval_enabled': 'true', 'general_setting.ping_interval_seconds': '1' },
        async () => {
          const response = await chat(auth, { model: 'chat-model', stream: true, messages: hi });
          const frames = response.body.split('\n\n');
          const first = frames.findIndex((f) => f.includes('"content":"one"'));
          const last = frames.findIndex((f) => f.includes('"content":" three"'));
          const pings = frames.slice(first, last).filter((f) => f === ': PING');
          expect(pings.length).toBeGreaterThanOrEqual(2);
          expect(streamedText(response.body)).toBe('one two three');
        },
      );
    } finally {
      fake.setBehaviour({ chunkDelayMs: 0, reply: REPLY });
    }
  });

  it('ends a silent stream after StreamingTimeoutSeconds and bills what was produced', async () => {
    fake.setBehaviour({ stallAfterChunks: 3 });
    try {
      await withOptions({ StreamingTimeoutSeconds: '1' }, async () => {
        const { auth, user } = await newCaller();
        const started = Date.now();
        const response = await chat(auth, { model: 'chat-model', stream: true, messages: hi });
        expect(Date.now() - started).toBeLessThan(5000);
        expect(streamedText(response.body)).toBe('Hello! This is');
        const events = dataEvents(response.body);
        expect(events.at(-1).error).toMatchObject({ code: 'stream_timeout', type: 'upstream_error' });
        // A cut answer never ends with the marker of a whole one.
        expect(response.body).not.toContain('data: [DONE]');
        const log = await consumeLog(response.headers['x-request-id'] as string);
        expect(JSON.parse(log.other).stream_end).toBe('timeout');
        expect(JSON.parse(log.other).usage_counted).toBe(true);
        expect(log.completionTokens).toBeGreaterThan(0);
        expect(log.completionTokens).toBeLessThan(6);
        expect(log.quota).toBe(log.promptTokens + log.completionTokens);
        expect(quotaComment(response.body)).toBe(log.quota);
        expect(await userQuota(user.id)).toBe(1_000_000 - log.quota);
      });
    } finally {
      fake.setBehaviour({ stallAfterChunks: undefined });
    }
  });
});

describe('an upstream that keeps its body open after [DONE]', () => {
  it('passes the answer on at once and ends it when the upstream ends', async () => {
    fake.setBehaviour({ endDelayMs: 600 });
    try {
      const { auth, user } = await newCaller();
      if (!t.relay.server.listening) await t.relay.listen({ port: 0, host: '127.0.0.1' });
      const { port } = t.relay.server.address() as AddressInfo;
      const started = performance.now();
      const response = await fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'chat-model', stream: true, messages: hi }),
      });
      const reader = response.body!.getReader();
      const decoder = new TextDecoder();
      let body = '';
      let wholeAnswerAt: number | undefined;
      for (let read = await reader.read(); !read.done; read = await reader.read()) {
        body += decoder.decode(read.value, { stream: true });
        if (wholeAnswerAt === undefined && streamedText(body) === REPLY) wholeAnswerAt = performance.now();
      }
      const endedAt = performance.now();
      // The whole answer came before the upstream's end, which the stream's own end waited for.
      expect(wholeAnswerAt! - started).toBeLessThan(400);
      expect(endedAt - started).toBeGreaterThanOrEqual(590);
      expect(body.endsWith('data: [DONE]\n\n')).toBe(true);
      const log = await consumeLog(response.headers.get('x-request-id')!);
      expect(quotaComment(body)).toBe(log.quota);
      expect(await userQuota(user.id)).toBe(1_000_000 - log.quota);
    } finally {
      fake.setBehaviour({ endDelayMs: 0 });
    }
  });
});

describe('optional retries', () => {
  it('retries an empty 200 on the next channel when RetryEmptyResponseEnabled is on', async () => {
    await withOptions({ RetryTimes: '1', RetryEmptyResponseEnabled: 'true' }, async () => {
      const { auth, user } = await newCaller();
      const plain = await chat(auth, { model: 'empty-model', messages: hi });
      expect(plain.statusCode).toBe(200);
      expect(plain.json().choices[0].message.content).toBe(REPLY);
      const log = await consumeLog(plain.headers['x-request-id'] as string);
      expect(log.channelId).toBe(mainChannelId);
      expect(JSON.parse(log.other).admin_info.use_channel).toEqual([
        String(emptyChannelId),
        String(mainChannelId),
      ]);

      const stream = await chat(auth, { model: 'empty-model', stream: true, messages: hi });
      expect(streamedText(stream.body)).toBe(REPLY);
      const streamLog = await consumeLog(stream.headers['x-request-id'] as string);
      expect(streamLog.channelId).toBe(mainChannelId);
      // Charged once per request, by the channel that answered.
      expect(await userQuota(user.id)).toBe(1_000_000 - log.quota - streamLog.quota);
    });
  });

  it('relays the empty 200 as it is when the option is off', async () => {
    await withOptions({ RetryTimes: '1' }, async () => {
      const { auth } = await newCaller();
      const response = await chat(auth, { model: 'empty-model', messages: hi });
      expect(response.statusCode).toBe(200);
      expect(response.json().choices[0].message.content).toBe('');
      const log = await consumeLog(response.headers['x-request-id'] as string);
      expect(log.channelId).toBe(emptyChannelId);
      const stream = await chat(auth, { model: 'empty-model', stream: true, messages: hi });
      expect(streamedText(stream.body)).toBe('');
      expect((await consumeLog(stream.headers['x-request-id'] as string)).channelId).toBe(emptyChannelId);
    });
  });

  it('gives up on a channel whose first token is late and answers from the next one', async () => {
    await withOptions({ RetryTimes: '1', FirstTokenTimeoutSeconds: '1' }, async () => {
      const { auth, user } = await newCaller();
      const abortedBefore = fakeSlow.abortedCount;
      const started = Date.now();
      const response = await chat(auth, { model: 'slow-model', stream: true, messages: hi });
      expect(Date.now() - started).toBeLessThan(2400);
      expect(response.statusCode).toBe(200);
      expect(streamedText(response.body)).toBe(REPLY);
      const log = await consumeLog(response.headers['x-request-id'] as string);
      expect(log.channelId).toBe(mainChannelId);
      expect(JSON.parse(log.other).admin_info.use_channel).toEqual([
        String(slowChannelId),
        String(mainChannelId),
      ]);
      await waitFor(async () => (fakeSlow.abortedCount > abortedBefore ? true : undefined));
      expect(await userQuota(user.id)).toBe(1_000_000 - log.quota);
    });
  });

  it('waits for a slow first token when FirstTokenTimeoutSeconds is 0', async () => {
    await withOptions({ RetryTimes: '1' }, async () => {
      const { auth } = await newCaller();
      const response = await chat(auth, { model: 'slow-model', stream: true, messages: hi });
      expect(streamedText(response.body)).toBe(REPLY);
      const log = await consumeLog(response.headers['x-request-id'] as string);
      expect(log.channelId).toBe(slowChannelId);
      expect(JSON.parse(log.other).frt).toBeGreaterThan(0);
    });
  });

  it('answers 504 first_token_timeout and refunds when no channel is left', async () => {
    await withOptions({ FirstTokenTimeoutSeconds: '1' }, async () => {
      const admin = await t.seedUser({ role: 10 });
      const adminToken = await t.seedToken(admin.id);
      // A forced channel: no retry is possible.
      const response = await chat(
        { authorization: `Bearer sk-${adminToken.key}-${slowChannelId}` },
        { model: 'slow-model', stream: true, messages: hi },
      );
      expect(response.statusCode).toBe(504);
      expect(response.json().error.code).toBe('first_token_timeout');
      expect(await userQuota(admin.id)).toBe(1_000_000);
    });
  });
});

describe('sensitive words', () => {
  const words = { SensitiveWords: 'forbidden thing\nsecret plan' };

  it('refuses a prompt with a sensitive word before anything is reserved or sent', async () => {
    await withOptions(words, async () => {
      const { auth, user } = await newCaller();
      const requests = fake.requests.length;
      const response = await chat(auth, {
        model: 'chat-model',
        messages: [{ role: 'user', content: [{ type: 'text', text: 'Tell me about the Forbidden Thing' }] }],
      });
      expect(response.statusCode).toBe(400);
      expect(response.json().error.code).toBe('sensitive_words_detected');
      expect(fake.requests.length).toBe(requests);
      expect(await userQuota(user.id)).toBe(1_000_000);
    });
  });

  it('masks words in answers, also when a word is split across chunks', async () => {
    fake.setBehaviour({ reply: 'Here is the Secret plan for today.' });
    try {
      await withOptions(
        { ...words, CheckSensitiveOnCompletionEnabled: 'true', StopOnSensitiveEnabled: 'false' },
        async () => {
          const { auth } = await newCaller();
          const plain = await chat(auth, { model: 'chat-model', messages: hi });
          expect(plain.json().choices[0].message.content).toBe('Here is the **###** for today.');
          const stream = await chat(auth, { model: 'chat-model', stream: true, messages: hi });
          expect(stream.body).not.toMatch(/secret|plan/i);
          expect(streamedText(stream.body)).toBe('Here is the **###** for today.');
          const log = await consumeLog(stream.headers['x-request-id'] as string);
          expect(log.quota).toBe(quotaComment(stream.body));
          expect(log.completionTokens).toBeGreaterThan(0);

          // The Responses API: deltas and every event that repeats the whole text.
          const responses = await t.relay.inject({
            method: 'POST',
            url: '/v1/responses',
            headers: auth,
            payload: { model: 'chat-model', input: 'hi', stream: true },
          });
          expect(responses.body).not.toMatch(/secret|plan/i);
          const deltas = responses.body
            .split('\n\n')
            .filter((f) => f.startsWith('event: response.output_text.delta'))
            .map((f) => JSON.parse(f.split('\ndata: ')[1]!).delta)
            .join('');
          expect(deltas).toBe('Here is the **###** for today.');
          expect(responses.body).toContain('"text":"Here is the **###** for today."');
          const plainResponse = await t.relay.inject({
            method: 'POST',
            url: '/v1/responses',
            headers: auth,
            payload: { model: 'chat-model', input: 'hi' },
          });
          expect(plainResponse.json().output[0].content[0].text).toBe('Here is the **###** for today.');
        },
      );
    } finally {
      fake.setBehaviour({ reply: REPLY });
    }
  });

  it('stops the answer with an error when StopOnSensitiveEnabled, billing what was produced', async () => {
    fake.setBehaviour({ reply: 'Here is the secret plan for today and much more text after it.' });
    try {
      await withOptions({ ...words, CheckSensitiveOnCompletionEnabled: 'true' }, async () => {
        const { auth, user } = await newCaller();
        const stream = await chat(auth, {
          model: 'chat-model',
          stream: true,
          stream_options: { include_usage: true },
          messages: hi,
        });
        expect(stream.statusCode).toBe(200);
        expect(stream.body).not.toContain('plan');
        expect(stream.body).not.toContain('today');
        expect(streamedText(stream.body)).toBe('Here is t');
        const events = dataEvents(stream.body);
        expect(events.at(-1).error.code).toBe('sensitive_words_detected');
        expect(stream.body.endsWith('data: [DONE]\n\n')).toBe(true);
        const log = await consumeLog(stream.headers['x-request-id'] as string);
        expect(log.completionTokens).toBeGreaterThan(0);
        expect(log.quota).toBeGreaterThan(0);
        expect(await userQuota(user.id)).toBe(1_000_000 - log.quota);

        const plain = await chat(auth, { model: 'chat-model', messages: hi });
        expect(plain.statusCode).toBe(400);
        expect(plain.json().error.code).toBe('sensitive_words_detected');
        const plainLog = await consumeLog(plain.headers['x-request-id'] as string);
        expect(plainLog.quota).toBe(plainLog.promptTokens + plainLog.completionTokens);
        expect(await userQuota(user.id)).toBe(1_000_000 - log.quota - plainLog.quota);
      });
    } finally {
      fake.setBehaviour({ reply: REPLY });
    }
  });
});

describe('playground', () => {
  const codec = () => createSessionCodec(t.runtime.deps.config.sessionSecret);
  const playground = (headers: Record<string, string>, body: Record<string, unknown>) =>
    t.relay.inject({ method: 'POST', url: '/pg/chat/completions', headers, payload: body });
  const signedIn = (uid: number) => ({
    cookie: `session=${codec().encode({ uid })}`,
    'new-api-user': String(uid),
  });

  it('relays a chat for a session, billed to the user only, logged as playground-<group>', async () => {
    const user = await t.seedUser({ quota: 500_000 });
    const response = await playground(signedIn(user.id), {
      model: 'chat-model',
      group: '',
      stream: true,
      messages: hi,
    });
    expect(response.statusCode).toBe(200);
    expect(streamedText(response.body)).toBe(REPLY);
    expect((fake.requests.at(-1)!.body as Record<string, unknown>).group).toBeUndefined();
    const log = await consumeLog(response.headers['x-request-id'] as string);
    expect(log).toMatchObject({
      tokenName: 'playground-default',
      tokenId: 0,
      userId: user.id,
      group: 'default',
    });
    expect(await userQuota(user.id)).toBe(500_000 - log.quota);

    const vip = await playground(signedIn(user.id), { model: 'chat-model', group: 'vip', messages: hi });
    expect(vip.statusCode).toBe(200);
    const vipLog = await consumeLog(vip.headers['x-request-id'] as string);
    expect(vipLog).toMatchObject({ tokenName: 'playground-vip', group: 'vip' });
  });

  it("accepts the user's own group by name even when GroupRatio does not list it (priced at ratio 1)", async () => {
    const user = await t.seedUser({ quota: 500_000, group: 'team-x' });
    const response = await playground(signedIn(user.id), {
      model: 'chat-model',
      group: 'team-x',
      messages: hi,
    });
    expect(response.statusCode).toBe(200);
    const log = await consumeLog(response.headers['x-request-id'] as string);
    expect(log).toMatchObject({ tokenName: 'playground-team-x', group: 'team-x' });
    expect(log.quota).toBe(log.promptTokens + log.completionTokens);
  });

  it('refuses a group the user may not use, access tokens and API keys', async () => {
    const user = await t.seedUser({ quota: 500_000 });
    const foreign = await playground(signedIn(user.id), { model: 'chat-model', group: 'svip', messages: hi });
    expect(foreign.statusCode).toBe(403);
    expect(foreign.json().error.code).toBe('group_forbidden');

    await db()
      .update(users)
      .set({ accessToken: 'console-access-token-0123456789' })
      .where(eq(users.id, user.id));
    const viaAccessToken = await playground(
      { authorization: 'Bearer console-access-token-0123456789', 'new-api-user': String(user.id) },
      { model: 'chat-model', messages: hi },
    );
    expect(viaAccessToken.statusCode).toBe(401);
    expect(viaAccessToken.json().error.code).toBe('access_token_not_allowed');
    const token = await t.seedToken(user.id);
    const viaKey = await playground(
      { authorization: `Bearer sk-${token.key}` },
      { model: 'chat-model', messages: hi },
    );
    expect(viaKey.statusCode).toBe(401);
    const otherUser = await playground(
      { ...signedIn(user.id), 'new-api-user': String(user.id + 1) },
      { model: 'chat-model', messages: hi },
    );
    expect(otherUser.statusCode).toBe(401);
    expect(await userQuota(user.id)).toBe(500_000);
  });

  it('serves /pg beside /api on one port in ROLE=all, with the cookie of a console sign-in', async () => {
    let app: FastifyInstance | undefined;
    try {
      app = await buildApp(t.runtime.deps);
      await registerRelay(app, t.runtime.deps, { flushIntervalMs: 20 });
      await app.ready();
      const user = await t.seedUser({ quota: 500_000 });
      await db()
        .update(users)
        .set({ password: await hashPassword('playground-pass-1') })
        .where(eq(users.id, user.id));
      const client = new ConsoleClient(app);
      const login = await client.login(user.username, 'playground-pass-1');
      expect(login.json().success).toBe(true);
      const response = await client.post('/pg/chat/completions', { model: 'chat-model', messages: hi });
      expect(response.statusCode).toBe(200);
      expect(response.json().choices[0].message.content).toBe(REPLY);
      const log = await consumeLog(response.headers['x-request-id'] as string);
      expect(log.tokenName).toBe('playground-default');
      expect(await userQuota(user.id)).toBe(500_000 - log.quota);
    } finally {
      await app?.close();
    }
  });
});
