import { channels, logs, tokens, users } from '@turnpike/core/db/schema/index';
import { TokenStatus } from '@turnpike/core/domain/tokens';
import { Role } from '@turnpike/core/domain/users';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countTextTokens } from './metering/tokens.ts';
import { type FakeOpenAi, startFakeOpenAi } from './testing/fake-openai.ts';
import { createRelayTestApp, type RelayTestApp } from './testing/relay-test-app.ts';
import { sleep, waitFor } from './testing/wait.ts';

// Prices of this file: round((prompt + completion × 4) × 1.5 × group ratio) for gpt-4o-mini.
const RATIOS = {
  'gpt-4o-mini': 1.5,
  'text-embedding-3-small': 0.01,
  'retry-model': 1,
  'broken-model': 1,
  'mapped-status-model': 1,
  'native-only-model': 1,
};

let t: RelayTestApp;
let fake: FakeOpenAi;
let fakeBadKey: FakeOpenAi;
let fakeBroken: FakeOpenAi;
let mainChannelId: number;
let badChannelId: number;
let backupChannelId: number;

const db = () => t.runtime.deps.db;
const userQuota = async (id: number) =>
  (await db().select({ quota: users.quota }).from(users).where(eq(users.id, id)))[0]!.quota;
const consumeLog = (requestId: string) =>
  waitFor(async () => (await db().select().from(logs).where(eq(logs.requestId, requestId)))[0]);

async function newCaller(quota = 1_000_000, token: Parameters<RelayTestApp['seedToken']>[1] = {}) {
  const user = await t.seedUser({ quota });
  const row = await t.seedToken(user.id, token);
  return { user, token: row, auth: { authorization: `Bearer sk-${row.key}` } };
}

const chat = (authorization: Record<string, string>, body: Record<string, unknown>) =>
  t.relay.inject({ method: 'POST', url: '/v1/chat/completions', headers: authorization, payload: body });

const expectedQuota = (prompt: number, completion: number) => Math.round((prompt + completion * 4) * 1.5);

beforeAll(async () => {
  fake = await startFakeOpenAi({ apiKey: 'sk-upstream-main' });
  fakeBadKey = await startFakeOpenAi({ apiKey: 'sk-someone-else' });
  fakeBroken = await startFakeOpenAi({ error: 500 });
  t = await createRelayTestApp();
  const { options } = t.runtime.deps;
  await options.set('ModelRatio', JSON.stringify(RATIOS));
  await options.set('CompletionRatio', JSON.stringify({ 'gpt-4o-mini': 4 }));
  mainChannelId = (
    await t.seedChannel({
      key: 'sk-upstream-main',
      baseUrl: fake.url,
      models: 'gpt-4o-mini,text-embedding-3-small',
      modelMapping: { 'gpt-4o-mini': 'gpt-4o-mini-2024-07-18' },
    })
  ).id;
  badChannelId = (
    await t.seedChannel({ key: 'sk-revoked', baseUrl: fakeBadKey.url, models: 'retry-model', priority: 10 })
  ).id;
  backupChannelId = (
    await t.seedChannel({ key: 'sk-upstream-main', baseUrl: fake.url, models: 'retry-model', priority: 0 })
  ).id;
  await t.seedChannel({ key: 'sk-x', baseUrl: fakeBroken.url, models: 'broken-model' });
  await t.seedChannel({
    key: 'sk-x',
    baseUrl: fakeBroken.url,
    models: 'mapped-status-model',
    statusCodeMapping: { '500': '503' },
  });
  // A Midjourney channel: the relay has no adapter for its format, so it must never be picked.
  await t.seedChannel({ key: 'sk-mj', baseUrl: fake.url, models: 'native-only-model', type: 2 });
  await t.startRelay();
});

afterAll(async () => {
  await t?.close();
  await Promise.all([fake?.close(), fakeBadKey?.close(), fakeBroken?.close()]);
});

describe('token auth', () => {
  it('answers 401 in OpenAI shape without a key or with an unknown one', async () => {
    const none = await chat({}, { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
    expect(none.statusCode).toBe(401);
    expect(none.json().error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_api_key' });
    const unknown = await chat(
      { authorization: 'Bearer sk-unknownunknownunknownunknown' },
      { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
    );
    expect(unknown.statusCode).toBe(401);
    expect(unknown.json().error.message).toContain('sk-unk***own');
    expect(unknown.json().error.message).not.toContain('unknownunknownunknown');
  });

  it('refuses disabled, expired and exhausted tokens with 401', async () => {
    const body = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };
    for (const fields of [
      { status: TokenStatus.Disabled },
      { expiredTime: Math.floor(Date.now() / 1000) - 10 },
      { unlimitedQuota: false, remainQuota: 0 },
    ]) {
      const { auth } = await newCaller(1_000_000, fields);
      const response = await chat(auth, body);
      expect(response.statusCode).toBe(401);
    }
  });

  it('enforces model limits, IP allow-lists and admin-only forced channels with 403', async () => {
    const body = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };
    const limited = await newCaller(1_000_000, { modelLimitsEnabled: true, modelLimits: 'gpt-4o' });
    expect((await chat(limited.auth, body)).statusCode).toBe(403);
    const ip = await newCaller(1_000_000, { allowIps: '10.0.0.0/8' });
    const refused = await chat(ip.auth, body);
    expect(refused.statusCode).toBe(403);
    expect(refused.json().error.code).toBe('ip_not_allowed');
    const cidrOk = await newCaller(1_000_000, { allowIps: '127.0.0.0/8' });
    expect((await chat(cidrOk.auth, body)).statusCode).toBe(200);
    const plain = await newCaller();
    const forced = await chat({ authorization: `Bearer sk-${plain.token.key}-${mainChannelId}` }, body);
    expect(forced.statusCode).toBe(403);
    expect(forced.json().error.code).toBe('channel_forbidden');
  });

  it('sees a token disabled in the console at once (tokens.changed)', async () => {
    const { auth, token } = await newCaller();
    const body = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };
    expect((await chat(auth, body)).statusCode).toBe(200);
    await db().update(tokens).set({ status: TokenStatus.Disabled }).where(eq(tokens.id, token.id));
    await t.runtime.deps.bus.publish({ type: 'tokens.changed', ids: [token.id] });
    expect((await chat(auth, body)).statusCode).toBe(401);
  });

  it('marks an expired token as expired in the database', async () => {
    const { auth, token } = await newCaller(1_000_000, { expiredTime: Math.floor(Date.now() / 1000) - 5 });
    expect(
      (await chat(auth, { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })).statusCode,
    ).toBe(401);
    await waitFor(async () => {
      const [row] = await db().select().from(tokens).where(eq(tokens.id, token.id));
      return row!.status === TokenStatus.Expired ? row : undefined;
    });
  });

  it('answers malformed JSON and unknown /v1 routes in OpenAI shape', async () => {
    const { auth } = await newCaller();
    const bad = await t.relay.inject({
      method: 'POST',
      url: '/v1/chat/completions',
      headers: { ...auth, 'content-type': 'application/json' },
      payload: '{"model":',
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.type).toBe('invalid_request_error');
    const missing = await t.relay.inject({ method: 'POST', url: '/v1/nothing-here', headers: auth });
    expect(missing.statusCode).toBe(404);
    expect(missing.json().error.code).toBe('not_found');
  });

  it('answers 400 for a body without messages, and changes no balance', async () => {
    const { auth, user } = await newCaller(5000);
    const response = await chat(auth, { model: 'gpt-4o-mini' });
    expect(response.statusCode).toBe(400);
    expect(response.json().error.message).toContain('messages');
    expect(await userQuota(user.id)).toBe(5000);
  });
});

describe('chat completions', () => {
  it('relays a non-stream answer as the upstream sent it and bills it by the formula', async () => {
    const { auth, user, token } = await newCaller(1_000_000);
    fake.requests.length = 0;
    const response = await chat(auth, {
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'Say hello' }],
      max_tokens: 100,
    });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body.object).toBe('chat.completion');
    expect(body.choices[0].message.content).toBe('Hello! This is a reply from the fake OpenAI upstream.');
    // Mapped upstream, keyed with the channel's key.
    const sent = fake.requests.at(-1)!;
    expect(sent.headers.authorization).toBe('Bearer sk-upstream-main');
    expect((sent.body as { model: string }).model).toBe('gpt-4o-mini-2024-07-18');
    const quota = expectedQuota(body.usage.prompt_tokens, body.usage.completion_tokens);
    expect(Number(response.headers['x-turnpike-quota'])).toBe(quota);
    await expect.poll(() => userQuota(user.id)).toBe(1_000_000 - quota);

    const log = await consumeLog(response.headers['x-request-id'] as string);
    expect(log).toMatchObject({
      userId: user.id,
      tokenId: token.id,
      modelName: 'gpt-4o-mini',
      quota,
      promptTokens: body.usage.prompt_tokens,
      completionTokens: body.usage.completion_tokens,
      channelId: mainChannelId,
      isStream: false,
      group: 'default',
    });
    const other = JSON.parse(log.other);
    expect(other).toMatchObject({
      model_ratio: 1.5,
      completion_ratio: 4,
      group_ratio: 1,
      cache_tokens: 0,
      is_model_mapped: true,
      upstream_model_name: 'gpt-4o-mini-2024-07-18',
      admin_info: { use_channel: [String(mainChannelId)] },
    });
    expect(other.frt).toBeGreaterThan(0);
    expect(other).not.toHaveProperty('reasoning_effort');
    const [counted] = await waitFor(async () => {
      const rows = await db().select().from(users).where(eq(users.id, user.id));
      return rows[0]!.requestCount === 1 ? rows : undefined;
    });
    expect(counted!.usedQuota).toBe(quota);
  });

  it('records the reasoning effort the request asked for in its consume log', async () => {
    const { auth } = await newCaller(1_000_000);
    const response = await chat(auth, {
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'Think, then say hello' }],
      reasoning_effort: 'low',
    });
    expect(response.statusCode).toBe(200);
    const log = await consumeLog(response.headers['x-request-id'] as string);
    expect(JSON.parse(log.other)).toMatchObject({ reasoning_effort: 'low' });
  });

  it('bills a trusted rich user exactly once without a reservation', async () => {
    // 10 × QuotaPerUnit and more: nothing is reserved up front, the whole bill is taken at settlement.
    const start = 20_000_000;
    const { auth, user } = await newCaller(start);
    const response = await chat(auth, {
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'Say hello' }],
    });
    expect(response.statusCode).toBe(200);
    const { usage } = response.json();
    const quota = expectedQuota(usage.prompt_tokens, usage.completion_tokens);
    expect(Number(response.headers['x-turnpike-quota'])).toBe(quota);
    // The charge of a trusted payer reaches the database with the next flush of the batching writer.
    await expect.poll(() => userQuota(user.id)).toBe(start - quota);
  });

  it('debits 30 concurrent calls of a trusted user exactly once each through the batching writer', async () => {
    const start = 20_000_000;
    const { auth, user } = await newCaller(start);
    const answers = await Promise.all(
      Array.from({ length: 30 }, () =>
        chat(auth, { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Say hello' }] }),
      ),
    );
    expect(answers.every((a) => a.statusCode === 200)).toBe(true);
    const charged = answers.reduce((sum, a) => sum + Number(a.headers['x-turnpike-quota']), 0);
    expect(charged).toBeGreaterThan(0);
    await expect.poll(() => userQuota(user.id)).toBe(start - charged);
  });

  it('streams chunk by chunk, hides the forced usage chunk and always ends with [DONE]', async () => {
    const { auth, user } = await newCaller(1_000_000);
    fake.requests.length = 0;
    const response = await chat(auth, {
      model: 'gpt-4o-mini',
      stream: true,
      messages: [{ role: 'user', content: 'Say hello' }],
    });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toContain('text/event-stream');
    // Usage was asked upstream even though the client did not.
    expect((fake.requests.at(-1)!.body as { stream_options: unknown }).stream_options).toEqual({
      include_usage: true,
    });
    const lines = response.body.split('\n\n').filter(Boolean);
    expect(lines.at(-1)).toBe('data: [DONE]');
    const chunks = lines.filter((l) => l.startsWith('data: {')).map((l) => JSON.parse(l.slice(6)));
    expect(chunks.every((c) => !('usage' in c))).toBe(true);
    const text = chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('');
    expect(text).toBe('Hello! This is a reply from the fake OpenAI upstream.');
    const quotaLine = lines.find((l) => l.startsWith(': x-turnpike-quota: '));
    const charged = Number(quotaLine!.slice(': x-turnpike-quota: '.length));
    expect(charged).toBeGreaterThan(0);
    await expect.poll(() => userQuota(user.id)).toBe(1_000_000 - charged);
    const log = await consumeLog(response.headers['x-request-id'] as string);
    expect(log.isStream).toBe(true);
    expect(expectedQuota(log.promptTokens, log.completionTokens)).toBe(charged);
  });

  it('passes the usage chunk through when the client asked for it', async () => {
    const { auth } = await newCaller();
    const response = await chat(auth, {
      model: 'gpt-4o-mini',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'Say hello' }],
    });
    const chunks = response.body
      .split('\n\n')
      .filter((l) => l.startsWith('data: {'))
      .map((l) => JSON.parse(l.slice(6)));
    const usageChunk = chunks.at(-1);
    expect(usageChunk.choices).toEqual([]);
    const charged = Number(/: x-turnpike-quota: (\d+)/.exec(response.body)![1]);
    expect(charged).toBe(expectedQuota(usageChunk.usage.prompt_tokens, usageChunk.usage.completion_tokens));
  });

  it('counts tokens itself and synthesises the usage chunk when the upstream sends none', async () => {
    const { auth } = await newCaller();
    fake.setBehaviour({ omitUsage: true });
    try {
      const response = await chat(auth, {
        model: 'gpt-4o-mini',
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: 'user', content: 'Say hello' }],
      });
      const chunks = response.body
        .split('\n\n')
        .filter((l) => l.startsWith('data: {'))
        .map((l) => JSON.parse(l.slice(6)));
      const usage = chunks.at(-1).usage;
      // Every chunk after the first output was passed on unread; they are all counted at the end.
      const text = chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('');
      expect(text).toBe('Hello! This is a reply from the fake OpenAI upstream.');
      expect(usage.completion_tokens).toBe(countTextTokens(text, 'o200k_base'));
      expect(usage.prompt_tokens).toBeGreaterThan(0);
      expect(response.body.endsWith('data: [DONE]\n\n')).toBe(true);
      const log = await consumeLog(response.headers['x-request-id'] as string);
      expect(log.completionTokens).toBe(usage.completion_tokens);
      expect(JSON.parse(log.other).usage_counted).toBe(true);
    } finally {
      fake.setBehaviour({ omitUsage: false });
    }
  });

  it('refunds the reservation when the upstream fails, and logs no consumption', async () => {
    const { auth, user, token } = await newCaller(50_000, { unlimitedQuota: false, remainQuota: 40_000 });
    const response = await chat(auth, {
      model: 'broken-model',
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 1000,
    });
    expect(response.statusCode).toBe(500);
    expect(response.json().error.message).toContain('request id');
    expect(await userQuota(user.id)).toBe(50_000);
    const [row] = await db().select().from(tokens).where(eq(tokens.id, token.id));
    expect(row!.remainQuota).toBe(40_000);
    await sleep(100);
    expect(
      await db()
        .select()
        .from(logs)
        .where(eq(logs.requestId, response.headers['x-request-id'] as string)),
    ).toEqual([]);
  });

  it('never sends an OpenAI body to a channel type without an adapter', async () => {
    const { auth, user } = await newCaller(5000);
    fake.requests.length = 0;
    const response = await chat(auth, {
      model: 'native-only-model',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(response.statusCode).toBe(503);
    expect(response.json().error.code).toBe('model_not_found');
    expect(fake.requests).toHaveLength(0);
    expect(await userQuota(user.id)).toBe(5000);
  });

  it("applies the channel's status code mapping to the error the client sees", async () => {
    const { auth } = await newCaller();
    const response = await chat(auth, {
      model: 'mapped-status-model',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(response.statusCode).toBe(503);
    expect(response.json().error.message).toContain('The server had an error');
  });

  it('retries on the next tier, never the failed channel, and disables a revoked key', async () => {
    const { options } = t.runtime.deps;
    await options.set('RetryTimes', '2');
    await options.set('AutomaticDisableChannelEnabled', 'true');
    try {
      const { auth } = await newCaller();
      const response = await chat(auth, {
        model: 'retry-model',
        messages: [{ role: 'user', content: 'hi' }],
      });
      expect(response.statusCode).toBe(200);
      const log = await consumeLog(response.headers['x-request-id'] as string);
      expect(log.channelId).toBe(backupChannelId);
      expect(JSON.parse(log.other).admin_info.use_channel).toEqual([
        String(badChannelId),
        String(backupChannelId),
      ]);
      const [bad] = await waitFor(async () => {
        const rows = await db().select().from(channels).where(eq(channels.id, badChannelId));
        return rows[0]!.status === 3 ? rows : undefined;
      });
      expect(JSON.parse(bad!.otherInfo!).status_reason).toContain('401');
      // The disabled channel is no longer tried.
      fakeBadKey.requests.length = 0;
      expect(
        (await chat(auth, { model: 'retry-model', messages: [{ role: 'user', content: 'hi' }] })).statusCode,
      ).toBe(200);
      expect(fakeBadKey.requests).toHaveLength(0);
    } finally {
      await options.set('RetryTimes', '0');
      await options.set('AutomaticDisableChannelEnabled', 'false');
    }
  });

  it('never overspends a small balance under 20 concurrent requests', async () => {
    // Each request reserves (prompt + 200) × 1.5 and costs about 100; the balance covers only a few.
    const start = 2000;
    const { auth, user } = await newCaller(start, { unlimitedQuota: false, remainQuota: 1_000_000 });
    const responses = await Promise.all(
      Array.from({ length: 20 }, () =>
        chat(auth, {
          model: 'gpt-4o-mini',
          max_tokens: 200,
          messages: [{ role: 'user', content: 'Say hello' }],
        }),
      ),
    );
    const ok = responses.filter((r) => r.statusCode === 200);
    const refused = responses.filter((r) => r.statusCode === 403);
    expect(ok.length + refused.length).toBe(20);
    expect(ok.length).toBeGreaterThan(0);
    expect(refused.length).toBeGreaterThan(0);
    for (const r of refused) expect(r.json().error.code).toBe('insufficient_user_quota');
    const charged = ok.reduce((sum, r) => sum + Number(r.headers['x-turnpike-quota']), 0);
    // What was served never cost more than the balance, and the balance fell by exactly that.
    expect(charged).toBeLessThanOrEqual(start);
    await expect.poll(() => userQuota(user.id)).toBe(start - charged);
  });
});

describe('models and embeddings', () => {
  it('lists the models of the caller group, filtered by the token limits', async () => {
    const { auth } = await newCaller();
    const response = await t.relay.inject({ method: 'GET', url: '/v1/models', headers: auth });
    expect(response.statusCode).toBe(200);
    const ids = response.json().data.map((m: { id: string }) => m.id);
    expect(ids).toEqual(expect.arrayContaining(['gpt-4o-mini', 'text-embedding-3-small', 'broken-model']));
    const limited = await newCaller(1000, { modelLimitsEnabled: true, modelLimits: 'gpt-4o-mini' });
    const only = await t.relay.inject({ method: 'GET', url: '/v1/models', headers: limited.auth });
    expect(only.json()).toEqual({
      object: 'list',
      // An OpenAI channel serves it: batches go through OpenAI's Batch API at its batch price.
      data: [
        {
          id: 'gpt-4o-mini',
          object: 'model',
          created: 1_626_777_600,
          owned_by: 'turnpike',
          batch_price: true,
        },
      ],
    });
    const one = await t.relay.inject({ method: 'GET', url: '/v1/models/gpt-4o', headers: limited.auth });
    expect(one.statusCode).toBe(404);
  });

  it('relays embeddings and bills the input tokens', async () => {
    const { auth, user } = await newCaller(1_000_000);
    const response = await t.relay.inject({
      method: 'POST',
      url: '/v1/embeddings',
      headers: auth,
      payload: { model: 'text-embedding-3-small', input: ['one input text', 'another one'] },
    });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body.data).toHaveLength(2);
    const quota = Math.max(1, Math.round(body.usage.prompt_tokens * 0.01));
    expect(Number(response.headers['x-turnpike-quota'])).toBe(quota);
    await expect.poll(() => userQuota(user.id)).toBe(1_000_000 - quota);
  });
});

describe('admins', () => {
  it('may force a channel with sk-<key>-<id>', async () => {
    const admin = await t.seedUser({ role: Role.Admin });
    const token = await t.seedToken(admin.id);
    const response = await chat(
      { authorization: `Bearer sk-${token.key}-${mainChannelId}` },
      { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
    );
    expect(response.statusCode).toBe(200);
    const log = await consumeLog(response.headers['x-request-id'] as string);
    expect(log.channelId).toBe(mainChannelId);
  });
});

describe('live state', () => {
  it('routes to a channel added in the console once channels.changed arrives', async () => {
    const { auth } = await newCaller();
    const body = { model: 'late-model', messages: [{ role: 'user', content: 'hi' }] };
    await t.runtime.deps.options.set('ModelRatio', JSON.stringify({ ...RATIOS, 'late-model': 1 }));
    // Unknown to every channel: bad input, a 404 in OpenAI's shape.
    const unknown = await chat(auth, body);
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().error).toMatchObject({ code: 'model_not_found', type: 'invalid_request_error' });
    const channel = await t.seedChannel({ key: 'sk-upstream-main', baseUrl: fake.url, models: 'late-model' });
    // The event is applied (the routing table rebuilt) before publish resolves.
    await t.runtime.deps.bus.publish({ type: 'channels.changed', ids: [channel.id] });
    const response = await chat(auth, body);
    expect(response.statusCode).toBe(200);
    expect(response.json().object).toBe('chat.completion');
  });

  it('aborts the upstream when the client disconnects mid-stream and bills only what was produced', async () => {
    const start = 1_000_000;
    const { auth, user } = await newCaller(start, { unlimitedQuota: false, remainQuota: start });
    fake.setBehaviour({
      chunkDelayMs: 40,
      reply: Array.from({ length: 60 }, (_, i) => `word${i}`).join(' '),
    });
    const abortedBefore = fake.abortedCount;
    const address = await t.relay.listen({ port: 0, host: '127.0.0.1' });
    try {
      const controller = new AbortController();
      const response = await fetch(`${address}/v1/chat/completions`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json', 'x-request-id': 'disconnect-test-1' },
        body: JSON.stringify({
          model: 'gpt-4o-mini',
          stream: true,
          messages: [{ role: 'user', content: 'go' }],
        }),
        signal: controller.signal,
      });
      const reader = response.body!.getReader();
      let received = '';
      while ((received.match(/"content":"[^"]+"/g) ?? []).length < 3) {
        const { value } = await reader.read();
        received += new TextDecoder().decode(value);
      }
      controller.abort();
      await waitFor(async () => (fake.abortedCount > abortedBefore ? true : undefined));
      const log = await consumeLog('disconnect-test-1');
      expect(log.completionTokens).toBeGreaterThan(0);
      // 60 words make well over 100 tokens; the client left after a few.
      expect(log.completionTokens).toBeLessThan(60);
      expect(JSON.parse(log.other).usage_counted).toBe(true);
      expect(log.quota).toBe(expectedQuota(log.promptTokens, log.completionTokens));
      await expect.poll(() => userQuota(user.id)).toBe(start - log.quota);
      const [token] = await db().select().from(tokens).where(eq(tokens.id, log.tokenId));
      expect(token!.remainQuota).toBe(start - log.quota);
    } finally {
      fake.setBehaviour({ chunkDelayMs: 0, reply: 'Hello! This is a reply from the fake OpenAI upstream.' });
    }
  });
});
