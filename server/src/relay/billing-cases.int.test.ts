/**
 * Billing cases end to end through `POST /v1/chat/completions` (reference §5.1–5.4), each as a plain answer and
 * as a stream: the bill must match the formula applied to the usage the upstream reported, and move the user's
 * and the token's balance, the consume log, the `x-turnpike-quota` header and the used-quota / request-count
 * counters of user, token and channel exactly once.
 */

import { channels, logs, quotaData, tokens, users } from '@turnpike/core/db/schema/index';
import { buildRelayApp } from '@turnpike/relay';
import { type FakeOpenAi, startFakeOpenAi } from '@turnpike/relay/testing/fake-openai';
import { sleep, waitFor } from '@turnpike/relay/testing/wait';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRelayTestApp, injectThroughServer, type RelayTestApp } from '../testing/all-test-app.ts';
import { registerUser } from '../testing/test-app.ts';

const START = 1_000_000;
const QUOTA_PER_UNIT = 500_000;
const CACHED_TOKENS = 6;

let t: RelayTestApp;
let fake: FakeOpenAi;
let fakeCached: FakeOpenAi;
let mainChannelId: number;
let cachedChannelId: number;

const db = () => t.runtime.deps.db;

interface Usage {
  readonly prompt: number;
  readonly completion: number;
  readonly cached: number;
}

interface BillingCase {
  readonly name: string;
  readonly model: string;
  /** The quota the reference's formula gives for this usage. */
  readonly bill: (usage: Usage) => number;
  /** Fields of the log's `other` the case is about. */
  readonly other: Record<string, unknown>;
  readonly channel: () => number;
  readonly upstreamModel?: string;
  readonly tokenGroup?: string;
  readonly userSetting?: Record<string, unknown>;
  readonly selfUse?: boolean;
  readonly unlimitedToken?: boolean;
}

const CASES: BillingCase[] = [
  {
    name: 'plain model ratio',
    model: 'plain-model',
    bill: (u) => Math.round((u.prompt + u.completion) * 2),
    other: { model_ratio: 2, completion_ratio: 1, group_ratio: 1, model_price: -1 },
    channel: () => mainChannelId,
  },
  {
    name: 'completion ratio',
    model: 'completion-model',
    bill: (u) => Math.round((u.prompt + u.completion * 3) * 1.5),
    other: { model_ratio: 1.5, completion_ratio: 3, group_ratio: 1 },
    channel: () => mainChannelId,
  },
  {
    name: 'cached prompt tokens at the cache ratio',
    model: 'cache-model',
    bill: (u) => Math.round((u.prompt - u.cached + u.cached * 0.25 + u.completion) * 2),
    other: { model_ratio: 2, cache_ratio: 0.25, cache_tokens: CACHED_TOKENS },
    channel: () => cachedChannelId,
  },
  {
    name: 'per-call model price',
    model: 'price-model',
    bill: () => Math.round(0.01 * QUOTA_PER_UNIT * 1),
    other: { model_price: 0.01, group_ratio: 1 },
    channel: () => mainChannelId,
    unlimitedToken: true,
  },
  {
    name: 'group ratio of a non-default token group',
    model: 'plain-model',
    bill: (u) => Math.round((u.prompt + u.completion) * 2 * 1.5),
    other: { model_ratio: 2, group_ratio: 1.5 },
    channel: () => mainChannelId,
    tokenGroup: 'vip',
  },
  {
    name: 'per-call price times the group ratio',
    model: 'price-model',
    bill: () => Math.round(0.01 * QUOTA_PER_UNIT * 1.5),
    other: { model_price: 0.01, group_ratio: 1.5 },
    channel: () => mainChannelId,
    tokenGroup: 'vip',
  },
  {
    name: "a group's own model and completion ratio for a token of the group, without GroupRatio",
    model: 'group-model',
    bill: (u) => Math.round((u.prompt + u.completion * 4) * 0.5),
    other: { model_ratio: 0.5, completion_ratio: 4, group_ratio: 1 },
    channel: () => mainChannelId,
    tokenGroup: 'vip',
  },
  {
    name: 'the un-grouped ratio for a token outside the group that has its own',
    model: 'group-model',
    bill: (u) => Math.round((u.prompt + u.completion) * 2),
    other: { model_ratio: 2, completion_ratio: 1, group_ratio: 1 },
    channel: () => mainChannelId,
  },
  {
    name: "a group's own per-call price for a token of the group",
    model: 'group-price-model',
    bill: () => Math.round(0.03 * QUOTA_PER_UNIT),
    other: { model_price: 0.03, group_ratio: 1 },
    channel: () => mainChannelId,
    tokenGroup: 'vip',
  },
  {
    name: 'the un-grouped per-call price for a token outside the group',
    model: 'group-price-model',
    bill: () => Math.round(0.01 * QUOTA_PER_UNIT),
    other: { model_price: 0.01, group_ratio: 1 },
    channel: () => mainChannelId,
  },
  {
    name: 'model mapping billed by the requested model',
    model: 'mapped-model',
    upstreamModel: 'gpt-4o-mini',
    bill: (u) => Math.round((u.prompt + u.completion) * 3),
    other: { model_ratio: 3, completion_ratio: 1, is_model_mapped: true, upstream_model_name: 'gpt-4o-mini' },
    channel: () => mainChannelId,
  },
  {
    name: 'self-use mode bills an unpriced model at 37.5',
    model: 'unpriced-model',
    bill: (u) => Math.round((u.prompt + u.completion) * 37.5),
    other: { model_ratio: 37.5, completion_ratio: 1 },
    channel: () => mainChannelId,
    selfUse: true,
  },
  {
    name: 'an unpriced model accepted by the user setting',
    model: 'unpriced-model',
    bill: (u) => Math.round((u.prompt + u.completion) * 37.5),
    other: { model_ratio: 37.5 },
    channel: () => mainChannelId,
    userSetting: { accept_unset_model_ratio_model: true },
  },
];

async function newCaller(c: Pick<BillingCase, 'tokenGroup' | 'userSetting' | 'unlimitedToken'>) {
  const user = await t.seedUser({
    quota: START,
    ...(c.userSetting ? { setting: JSON.stringify(c.userSetting) } : {}),
  });
  const token = await t.seedToken(user.id, {
    unlimitedQuota: c.unlimitedToken === true,
    remainQuota: c.unlimitedToken ? 0 : START,
    ...(c.tokenGroup ? { group: c.tokenGroup } : {}),
  });
  return { user, token, headers: { authorization: `Bearer sk-${token.key}` } };
}

const userRow = async (id: number) => (await db().select().from(users).where(eq(users.id, id)))[0]!;
const tokenRow = async (id: number) => (await db().select().from(tokens).where(eq(tokens.id, id)))[0]!;
const channelUsed = async (id: number) =>
  (await db().select({ used: channels.usedQuota }).from(channels).where(eq(channels.id, id)))[0]!.used;

/** Sends the request and reads the usage the upstream reported and the quota the relay says it charged. */
async function send(headers: Record<string, string>, model: string, stream: boolean) {
  const response = await t.relay.inject({
    method: 'POST',
    url: '/v1/chat/completions',
    headers,
    payload: {
      model,
      messages: [{ role: 'user', content: 'What is the price of this request?' }],
      max_tokens: 50,
      ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
    },
  });
  expect(response.statusCode, response.body).toBe(200);
  let usage: Record<string, number> & { prompt_tokens_details?: { cached_tokens?: number } };
  let header: number;
  if (stream) {
    const events = response.body.split('\n\n').filter(Boolean);
    expect(events.at(-1)).toBe('data: [DONE]');
    const chunks = events.filter((e) => e.startsWith('data: {')).map((e) => JSON.parse(e.slice(6)));
    usage = chunks.at(-1).usage;
    const comment = events.find((e) => e.startsWith(': x-turnpike-quota: '));
    header = Number(comment?.slice(': x-turnpike-quota: '.length));
  } else {
    usage = response.json().usage;
    header = Number(response.headers['x-turnpike-quota']);
  }
  return {
    requestId: response.headers['x-request-id'] as string,
    header,
    usage: {
      prompt: usage.prompt_tokens as number,
      completion: usage.completion_tokens as number,
      cached: usage.prompt_tokens_details?.cached_tokens ?? 0,
    },
  };
}

beforeAll(async () => {
  fake = await startFakeOpenAi();
  fakeCached = await startFakeOpenAi({ cachedTokens: CACHED_TOKENS });
  t = await createRelayTestApp();
  const { options } = t.runtime.deps;
  await options.set(
    'ModelRatio',
    JSON.stringify({
      'plain-model': 2,
      'completion-model': 1.5,
      'cache-model': 2,
      'mapped-model': 3,
      'group-model': 2,
    }),
  );
  await options.set('CompletionRatio', JSON.stringify({ 'completion-model': 3 }));
  await options.set('CacheRatio', JSON.stringify({ 'cache-model': 0.25 }));
  await options.set('ModelPrice', JSON.stringify({ 'price-model': 0.01, 'group-price-model': 0.01 }));
  // vip's own prices (a ModelPrice with spec.groups writes these): vip pays them, other groups the maps above.
  await options.set('GroupModelRatio', JSON.stringify({ vip: { 'group-model': 0.5 } }));
  await options.set('GroupCompletionRatio', JSON.stringify({ vip: { 'group-model': 4 } }));
  await options.set('GroupModelPrice', JSON.stringify({ vip: { 'group-price-model': 0.03 } }));
  await options.set('GroupRatio', JSON.stringify({ default: 1, vip: 1.5, svip: 1 }));
  await options.set('UserUsableGroups', JSON.stringify({ default: 'Default', vip: 'VIP' }));
  mainChannelId = (
    await t.seedChannel({
      key: 'sk-upstream',
      baseUrl: fake.url,
      models:
        'plain-model,completion-model,price-model,mapped-model,unpriced-model,group-model,group-price-model',
      group: 'default,vip',
      modelMapping: { 'mapped-model': 'gpt-4o-mini' },
    })
  ).id;
  cachedChannelId = (
    await t.seedChannel({ key: 'sk-upstream', baseUrl: fakeCached.url, models: 'cache-model' })
  ).id;
  await t.startRelay();
});

afterAll(async () => {
  await t?.close();
  await Promise.all([fake?.close(), fakeCached?.close()]);
});

describe('billing cases through /v1/chat/completions', () => {
  const table = CASES.flatMap((c) => [
    { ...c, stream: false, title: c.name },
    { ...c, stream: true, title: `${c.name} (stream)` },
  ]);

  it.each(table)('$title', async (c) => {
    const { options } = t.runtime.deps;
    if (c.selfUse) await options.set('SelfUseModeEnabled', 'true');
    try {
      const { user, token, headers } = await newCaller(c);
      const channelBefore = await channelUsed(c.channel());
      const upstream = c.channel() === cachedChannelId ? fakeCached : fake;
      upstream.requests.length = 0;

      const { requestId, header, usage } = await send(headers, c.model, c.stream);
      expect(usage.prompt).toBeGreaterThan(0);
      if (c.model === 'cache-model') expect(usage.cached).toBe(CACHED_TOKENS);
      const quota = c.bill(usage);
      expect(quota).toBeGreaterThan(0);
      expect(header).toBe(quota);
      expect((upstream.requests.at(-1)!.body as { model: string }).model).toBe(c.upstreamModel ?? c.model);

      // The debit reaches the database with its log, in the writer's next flush.
      const log = await waitFor(
        async () => (await db().select().from(logs).where(eq(logs.requestId, requestId)))[0],
      );
      expect((await userRow(user.id)).quota).toBe(START - quota);
      expect((await tokenRow(token.id)).remainQuota).toBe(c.unlimitedToken ? 0 : START - quota);
      expect(log).toMatchObject({
        userId: user.id,
        tokenId: token.id,
        channelId: c.channel(),
        modelName: c.model,
        quota,
        promptTokens: usage.prompt,
        completionTokens: usage.completion,
        isStream: c.stream,
        group: c.tokenGroup ?? 'default',
      });
      expect(JSON.parse(log.other)).toMatchObject(c.other);

      // Counters arrive with the batch writer, once.
      await waitFor(async () => ((await userRow(user.id)).requestCount === 1 ? true : undefined));
      const check = async () => {
        expect(await userRow(user.id)).toMatchObject({
          quota: START - quota,
          usedQuota: quota,
          requestCount: 1,
        });
        expect((await tokenRow(token.id)).usedQuota).toBe(quota);
        expect(await channelUsed(c.channel())).toBe(channelBefore + quota);
        expect(await db().select().from(logs).where(eq(logs.requestId, requestId))).toHaveLength(1);
      };
      await check();
      await sleep(100);
      await check();
    } finally {
      if (c.selfUse) await options.set('SelfUseModeEnabled', 'false');
    }
  });

  it('refuses an unpriced model without self-use mode or the user setting, charging nothing', async () => {
    const { user, token, headers } = await newCaller({});
    fake.requests.length = 0;
    const channelBefore = await channelUsed(mainChannelId);
    const response = await t.relay.inject({
      method: 'POST',
      url: '/v1/chat/completions',
      headers,
      payload: { model: 'unpriced-model', messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().error.code).toBe('model_price_error');
    expect(response.json().error.message).toContain('unpriced-model');
    expect(response.headers['x-turnpike-quota']).toBeUndefined();
    expect(fake.requests).toHaveLength(0);
    await sleep(100);
    expect(await userRow(user.id)).toMatchObject({ quota: START, usedQuota: 0, requestCount: 0 });
    expect(await tokenRow(token.id)).toMatchObject({ remainQuota: START, usedQuota: 0 });
    expect(await channelUsed(mainChannelId)).toBe(channelBefore);
    expect(await db().select().from(logs).where(eq(logs.userId, user.id))).toEqual([]);
  });
});

describe('data dashboard', () => {
  it('adds each consume to the hour bucket of its user and model, written on a graceful close', async () => {
    const owner = await registerUser(t.app, `dash${Date.now() % 100_000}`);
    const userId = owner.userId!;
    await db().update(users).set({ quota: START }).where(eq(users.id, userId));
    const token = await t.seedToken(userId);
    // A relay of its own, so closing it (a graceful shutdown) is part of the test.
    const relay = injectThroughServer(await buildRelayApp(t.runtime.deps, { flushIntervalMs: 20 }));
    await relay.ready();
    const charges: number[] = [];
    const tokensUsed: number[] = [];
    for (const model of ['plain-model', 'plain-model', 'completion-model']) {
      const response = await relay.inject({
        method: 'POST',
        url: '/v1/chat/completions',
        headers: { authorization: `Bearer sk-${token.key}` },
        payload: { model, messages: [{ role: 'user', content: 'dashboard' }] },
      });
      expect(response.statusCode).toBe(200);
      charges.push(Number(response.headers['x-turnpike-quota']));
      tokensUsed.push(response.json().usage.total_tokens);
    }
    // DataExportInterval is minutes: only the close can have written the buckets.
    await relay.close();

    const now = Math.floor(Date.now() / 1000);
    const answer = await owner.get(`/api/data/self?start_timestamp=${now - 7200}&end_timestamp=${now}`);
    expect(answer.json().success).toBe(true);
    const rows = answer.json().data as {
      model_name: string;
      count: number;
      quota: number;
      token_used: number;
      created_at: number;
    }[];
    const byModel = Object.fromEntries(rows.map((row) => [row.model_name, row]));
    expect(byModel['plain-model']).toMatchObject({
      count: 2,
      quota: charges[0]! + charges[1]!,
      token_used: tokensUsed[0]! + tokensUsed[1]!,
    });
    // Bucketed by the hour (the test may straddle one).
    expect(byModel['plain-model']!.created_at % 3600).toBe(0);
    expect(now - byModel['plain-model']!.created_at).toBeLessThan(3600 + 60);
    expect(byModel['completion-model']).toMatchObject({
      count: 1,
      quota: charges[2],
      token_used: tokensUsed[2],
    });
  });

  it('counts nothing for the dashboard while DataExportEnabled is off', async () => {
    const { options } = t.runtime.deps;
    await options.set('DataExportEnabled', 'false');
    try {
      const user = await t.seedUser({ quota: START });
      const token = await t.seedToken(user.id);
      const relay = injectThroughServer(await buildRelayApp(t.runtime.deps, { flushIntervalMs: 20 }));
      await relay.ready();
      const response = await relay.inject({
        method: 'POST',
        url: '/v1/chat/completions',
        headers: { authorization: `Bearer sk-${token.key}` },
        payload: { model: 'plain-model', messages: [{ role: 'user', content: 'dashboard' }] },
      });
      expect(response.statusCode).toBe(200);
      await relay.close();
      expect(await db().select().from(quotaData).where(eq(quotaData.userId, user.id))).toEqual([]);
      expect(await db().select().from(logs).where(eq(logs.userId, user.id))).toHaveLength(1);
    } finally {
      await options.set('DataExportEnabled', 'true');
    }
  });
});
