/**
 * Jimeng (51), Vidu (52) and Doubao Seedance (54) behind OpenAI's video API: the official `openai` SDK creates,
 * polls and downloads while the relay speaks each provider's own task API to a fake that checks its authentication
 * (Volcengine's signature, Vidu's token, Ark's bearer) and refuses a wrong one; billed per second, settled on the
 * length the provider reports, refunded once on failure.
 */
import { logs, tasks } from '@turnpike/core/db/schema/index';
import { LogType } from '@turnpike/core/domain/logs';
import { ProviderTypeId } from '@turnpike/core/providers/catalogue';
import { and, eq } from 'drizzle-orm';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRelayTestApp, type RelayTestApp } from '../../testing/relay-test-app.ts';
import { taskPollerOf } from '../register.ts';
import {
  FAKE_JIMENG_MP4,
  type FakeJimengUpstream,
  startFakeJimengUpstream,
} from './testing/fake-jimeng-upstream.ts';
import {
  FAKE_SEEDANCE_MP4,
  type FakeSeedanceUpstream,
  startFakeSeedanceUpstream,
} from './testing/fake-seedance-upstream.ts';
import { FAKE_MP4, type FakeVideoUpstream, startFakeVideoUpstream } from './testing/fake-video-upstream.ts';
import { FAKE_VIDU_MP4, type FakeViduUpstream, startFakeViduUpstream } from './testing/fake-vidu-upstream.ts';
import { VIDEO_TEST_QUOTA, videoBooks } from './testing/video-books.ts';

const START = VIDEO_TEST_QUOTA;
const JIMENG = 'jimeng_t2v_v30';
const VIDU = 'viduq2';
const SEEDANCE = 'doubao-seedance-1-0-pro-250528';
const SORA = 'sora-2-for-sora-channel';
const PRICES: Record<string, number> = { [JIMENG]: 0.04, [VIDU]: 0.05, [SEEDANCE]: 0.03, [SORA]: 0.1 };
const quotaOf = (model: string, seconds: number) => Math.trunc((PRICES[model] as number) * 500_000 * seconds);

let t: RelayTestApp;
let jimeng: FakeJimengUpstream;
let vidu: FakeViduUpstream;
let seedance: FakeSeedanceUpstream;
let sora: FakeVideoUpstream;
let baseURL: string;

const { db, payer, quotaOfUser, settled, upstreamIdOf } = videoBooks(
  () => t,
  () => baseURL,
);

const logsOf = (userId: number, type: number) =>
  db()
    .select()
    .from(logs)
    .where(and(eq(logs.userId, userId), eq(logs.type, type)));

const poll = () => taskPollerOf(t.relay).runOnce();

/** A JSON create with `input_reference.image_url`, which the SDK would send as a form. */
async function createJson(
  client: OpenAI,
  body: Record<string, unknown>,
): Promise<{ id: string; seconds: string }> {
  const answer = await fetch(`${baseURL}/videos`, {
    method: 'POST',
    headers: { authorization: `Bearer ${client.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(answer.status).toBe(200);
  return (await answer.json()) as { id: string; seconds: string };
}

beforeAll(async () => {
  t = await createRelayTestApp();
  const { options } = t.runtime.deps;
  await options.set('ModelPrice', JSON.stringify(PRICES));
  await options.set('GroupRatio', JSON.stringify({ default: 1, vip: 1, svip: 1 }));
  jimeng = await startFakeJimengUpstream('AKLTtestaccess', 'dGVzdHNlY3JldA==');
  vidu = await startFakeViduUpstream('vda_test_token');
  seedance = await startFakeSeedanceUpstream('ark-test-key');
  sora = await startFakeVideoUpstream({ key: 'sk-sora-upstream' });
  await t.seedChannel({
    type: ProviderTypeId.Sora,
    key: 'sk-sora-upstream',
    baseUrl: sora.url,
    models: SORA,
    modelMapping: { [SORA]: 'sora-2' },
  });
  await t.seedChannel({
    type: ProviderTypeId.Jimeng,
    key: 'AKLTtestaccess|dGVzdHNlY3JldA==',
    baseUrl: jimeng.url,
    models: JIMENG,
  });
  await t.seedChannel({ type: ProviderTypeId.Vidu, key: 'vda_test_token', baseUrl: vidu.url, models: VIDU });
  await t.seedChannel({
    type: ProviderTypeId.DoubaoVideo,
    key: 'ark-test-key',
    baseUrl: seedance.url,
    models: SEEDANCE,
  });
  // The same providers with keys they do not accept, for models of their own.
  await t.seedChannel({
    type: ProviderTypeId.Jimeng,
    key: 'AKLTtestaccess|bm90LXRoZS1zZWNyZXQ=',
    baseUrl: jimeng.url,
    models: 'jimeng-wrong-key',
    modelMapping: { 'jimeng-wrong-key': JIMENG },
  });
  await t.seedChannel({
    type: ProviderTypeId.Vidu,
    key: 'vda_wrong',
    baseUrl: vidu.url,
    models: 'vidu-wrong-key',
  });
  await t.seedChannel({
    type: ProviderTypeId.DoubaoVideo,
    key: 'ark-wrong',
    baseUrl: seedance.url,
    models: 'seedance-wrong-key',
  });
  await options.set(
    'ModelPrice',
    JSON.stringify({
      ...PRICES,
      'jimeng-wrong-key': 0.04,
      'vidu-wrong-key': 0.05,
      'seedance-wrong-key': 0.03,
    }),
  );
  const relay = await t.startRelay();
  baseURL = `${await relay.listen({ port: 0, host: '127.0.0.1' })}/v1`;
});

afterAll(async () => {
  await t?.close();
  await Promise.all([jimeng?.close(), vidu?.close(), seedance?.close(), sora?.close()]);
});

describe('Jimeng through the OpenAI video API', () => {
  it('signs every call, polls to the end, charges the asked length and downloads without credentials', async () => {
    const { user, client } = await payer();
    const video = await client.videos.create({
      model: JIMENG,
      prompt: 'a paper boat',
      seconds: '10' as '4',
      size: '1280x720',
    });
    expect(video).toMatchObject({ status: 'queued', seconds: '10', model: JIMENG });
    const sent = jimeng.requests.find((r) => r.action === 'CVSync2AsyncSubmitTask');
    expect(sent?.body).toEqual({
      req_key: JIMENG,
      prompt: 'a paper boat',
      seed: -1,
      frames: 241,
      aspect_ratio: '16:9',
    });
    await settled(user.id, START - quotaOf(JIMENG, 10));

    const upstreamId = await upstreamIdOf(video.id);
    expect(upstreamId).toMatch(/^jimeng_t2v_v30\//);
    const taskId = upstreamId.split('/')[1] as string;
    await poll();
    expect(await client.videos.retrieve(video.id)).toMatchObject({ status: 'queued' });
    jimeng.generate(taskId);
    await poll();
    expect(await client.videos.retrieve(video.id)).toMatchObject({ status: 'in_progress' });
    jimeng.finish(taskId);
    await poll();
    expect(await client.videos.retrieve(video.id)).toMatchObject({ status: 'completed', seconds: '10' });
    expect(await quotaOfUser(user.id)).toBe(START - quotaOf(JIMENG, 10));

    const content = await client.videos.downloadContent(video.id);
    expect(Buffer.from(await content.arrayBuffer()).equals(FAKE_JIMENG_MP4)).toBe(true);
    const results = jimeng.requests.filter((r) => r.action === 'CVSync2AsyncGetResult');
    expect(results.at(-1)?.body).toEqual({ req_key: JIMENG, task_id: taskId });
    expect(
      jimeng.requests.filter((r) => r.path.startsWith('/cdn/')).every((r) => !r.headers.authorization),
    ).toBe(true);
    // Every API call was signed (the fake answers 401 to any other, and the task would not exist).
    expect(
      jimeng.requests
        .filter((r) => r.action !== null)
        .every((r) => /^HMAC-SHA256 Credential=AKLTtestaccess\//.test(r.headers.authorization ?? '')),
    ).toBe(true);
  });

  it('sends a first frame to the first-frame req_key as Base64, 5 seconds unless asked', async () => {
    const { client } = await payer();
    const video = await createJson(client, {
      model: JIMENG,
      prompt: 'the boat sails',
      input_reference: { image_url: 'data:image/png;base64,iVBORw0KGgo=' },
    });
    expect(video.seconds).toBe('5');
    expect(jimeng.requests.filter((r) => r.action === 'CVSync2AsyncSubmitTask').at(-1)?.body).toEqual({
      req_key: 'jimeng_i2v_first_v30',
      prompt: 'the boat sails',
      seed: -1,
      frames: 121,
      binary_data_base64: ['iVBORw0KGgo='],
    });
    expect(await upstreamIdOf(video.id)).toMatch(/^jimeng_i2v_first_v30\//);
  });

  it('refuses a length Jimeng does not make before anything is held', async () => {
    const { user, client } = await payer();
    await expect(client.videos.create({ model: JIMENG, prompt: 'x', seconds: '8' })).rejects.toMatchObject({
      status: 400,
      error: { param: 'seconds' },
    });
    expect(await quotaOfUser(user.id)).toBe(START);
  });

  it('refunds once a task the result call refuses (content check)', async () => {
    const { user, client } = await payer();
    const video = await client.videos.create({ model: JIMENG, prompt: 'a storm', seconds: '5' as '4' });
    await settled(user.id, START - quotaOf(JIMENG, 5));
    jimeng.refuse((await upstreamIdOf(video.id)).split('/')[1] as string, 50412, 'Text Risk Not Pass');
    await Promise.all([poll(), poll()]);
    await poll();
    expect(await client.videos.retrieve(video.id)).toMatchObject({
      status: 'failed',
      error: { message: expect.stringMatching(/Text Risk Not Pass/) },
    });
    expect(await quotaOfUser(user.id)).toBe(START);
    expect(await logsOf(user.id, LogType.System)).toHaveLength(1);
  });
});

describe('Vidu through the OpenAI video API', () => {
  it('sends the token, polls the creations to the end and downloads the clip', async () => {
    const { user, client } = await payer();
    const video = await client.videos.create({
      model: VIDU,
      prompt: 'a red kite',
      seconds: '8' as '4',
      size: '720x1280',
    });
    expect(video).toMatchObject({ status: 'queued', seconds: '8' });
    expect(vidu.requests.find((r) => r.path === '/ent/v2/text2video')?.body).toEqual({
      model: VIDU,
      prompt: 'a red kite',
      duration: 8,
      aspect_ratio: '9:16',
    });
    await settled(user.id, START - quotaOf(VIDU, 8));
    const id = await upstreamIdOf(video.id);
    vidu.process(id);
    await poll();
    expect(await client.videos.retrieve(video.id)).toMatchObject({ status: 'in_progress' });
    vidu.succeed(id);
    await poll();
    expect(await client.videos.retrieve(video.id)).toMatchObject({ status: 'completed', seconds: '8' });
    const content = await client.videos.downloadContent(video.id);
    expect(Buffer.from(await content.arrayBuffer()).equals(FAKE_VIDU_MP4)).toBe(true);
    expect(
      vidu.requests
        .filter((r) => r.path.startsWith('/ent/'))
        .every((r) => r.headers.authorization === 'Token vda_test_token'),
    ).toBe(true);
    expect(await quotaOfUser(user.id)).toBe(START - quotaOf(VIDU, 8));
  });

  it('sends a first frame to img2video', async () => {
    const { client } = await payer();
    await createJson(client, {
      model: VIDU,
      prompt: 'the kite rises',
      seconds: '5',
      input_reference: { image_url: 'https://images.example/kite.png' },
    });
    expect(vidu.requests.filter((r) => r.path === '/ent/v2/img2video').at(-1)?.body).toEqual({
      model: VIDU,
      images: ['https://images.example/kite.png'],
      prompt: 'the kite rises',
      duration: 5,
    });
  });

  it('refunds a failed task once', async () => {
    const { user, client } = await payer();
    const video = await client.videos.create({ model: VIDU, prompt: 'a storm', seconds: '4' });
    await settled(user.id, START - quotaOf(VIDU, 4));
    vidu.fail(await upstreamIdOf(video.id), 'AuditSubmitIllegal');
    await Promise.all([poll(), poll()]);
    expect(await client.videos.retrieve(video.id)).toMatchObject({
      status: 'failed',
      error: { message: expect.stringMatching(/AuditSubmitIllegal/) },
    });
    expect(await quotaOfUser(user.id)).toBe(START);
    expect(await logsOf(user.id, LogType.System)).toHaveLength(1);
  });

  it('never serves more seconds than the balance pays for when submits arrive at once', async () => {
    const price = quotaOf(VIDU, 5);
    const balance = price * 2 + Math.trunc(price / 2);
    const { user, client } = await payer({ quota: balance });
    const results = await Promise.allSettled(
      Array.from({ length: 6 }, (_, i) =>
        client.videos.create({ model: VIDU, prompt: `clip ${i}`, seconds: '5' as '4' }),
      ),
    );
    const accepted = results.filter((r) => r.status === 'fulfilled');
    expect(accepted).toHaveLength(2);
    for (const r of results) if (r.status === 'rejected') expect(r.reason).toMatchObject({ status: 403 });
    await settled(user.id, balance - 2 * price);
    const consume = await logsOf(user.id, LogType.Consume);
    // Served seconds × price ≤ the balance; consume logs = deductions.
    expect(consume.reduce((sum, log) => sum + log.quota, 0)).toBe(balance - (await quotaOfUser(user.id)));
    expect(2 * price).toBeLessThanOrEqual(balance);
  });
});

describe('Doubao Seedance through the OpenAI video API', () => {
  it('sends the bearer and text commands, settles on the reported duration and downloads the clip', async () => {
    const { user, client } = await payer();
    const video = await client.videos.create({
      model: SEEDANCE,
      prompt: 'a lantern',
      seconds: '6' as '4',
      size: '1280x720',
    });
    expect(seedance.requests.find((r) => r.method === 'POST')?.body).toEqual({
      model: SEEDANCE,
      content: [{ type: 'text', text: 'a lantern --rs 720p --rt 16:9 --dur 6' }],
    });
    await settled(user.id, START - quotaOf(SEEDANCE, 6));
    const id = await upstreamIdOf(video.id);
    expect(id).toMatch(/^cgt-/);
    seedance.run(id);
    await poll();
    expect(await client.videos.retrieve(video.id)).toMatchObject({ status: 'in_progress' });
    seedance.succeed(id, 5);
    await poll();
    expect(await client.videos.retrieve(video.id)).toMatchObject({ status: 'completed', seconds: '5' });
    // Five seconds delivered of six charged: one comes back, once.
    expect(await quotaOfUser(user.id)).toBe(START - quotaOf(SEEDANCE, 5));
    await poll();
    expect(await quotaOfUser(user.id)).toBe(START - quotaOf(SEEDANCE, 5));
    const content = await client.videos.downloadContent(video.id);
    expect(Buffer.from(await content.arrayBuffer()).equals(FAKE_SEEDANCE_MP4)).toBe(true);
    expect(
      seedance.requests
        .filter((r) => r.path.startsWith('/api/'))
        .every((r) => r.headers.authorization === 'Bearer ark-test-key'),
    ).toBe(true);
  });

  it('refunds a failed task once', async () => {
    const { user, client } = await payer();
    const video = await client.videos.create({ model: SEEDANCE, prompt: 'a storm', seconds: '4' });
    await settled(user.id, START - quotaOf(SEEDANCE, 4));
    seedance.fail(
      await upstreamIdOf(video.id),
      'OutputVideoSensitiveContentDetected',
      'the output may contain sensitive content',
    );
    await Promise.all([poll(), poll()]);
    expect(await client.videos.retrieve(video.id)).toMatchObject({ status: 'failed' });
    expect(await quotaOfUser(user.id)).toBe(START);
    expect(await logsOf(user.id, LogType.System)).toHaveLength(1);
  });
});

describe('a Sora channel (55)', () => {
  it("is OpenAI's video API as it is: bearer, /v1/videos, settled on the reported length, content piped", async () => {
    const { user, client } = await payer();
    const video = await client.videos.create({ model: SORA, prompt: 'a comet', seconds: '8' });
    await settled(user.id, START - quotaOf(SORA, 8));
    const sent = sora.requests.find((r) => r.method === 'POST');
    expect(sent).toMatchObject({
      path: '/v1/videos',
      body: { model: 'sora-2', prompt: 'a comet', seconds: '8' },
    });
    expect(sent?.headers.authorization).toBe('Bearer sk-sora-upstream');
    sora.complete(await upstreamIdOf(video.id), '4');
    await poll();
    expect(await client.videos.retrieve(video.id)).toMatchObject({ status: 'completed', seconds: '4' });
    expect(await quotaOfUser(user.id)).toBe(START - quotaOf(SORA, 4));
    const content = await client.videos.downloadContent(video.id);
    expect(Buffer.from(await content.arrayBuffer()).equals(FAKE_MP4)).toBe(true);
  });
});

describe('a key the provider refuses', () => {
  it.each([
    ['jimeng-wrong-key', () => jimeng.requests],
    ['vidu-wrong-key', () => vidu.requests],
    ['seedance-wrong-key', () => seedance.requests],
  ])(
    '%s: the upstream refuses it, the caller gets a 503 (not a 401 about their own key), no task, no charge',
    async (model, requestsOf) => {
      const { user, client } = await payer();
      const before = requestsOf().length;
      const error = await client.videos
        .create({ model, prompt: 'x', seconds: '5' as '4' })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.APIError);
      expect(error).toMatchObject({ status: 503, error: { code: 'channel_unauthorized' } });
      expect(requestsOf().length).toBe(before + 1);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(await quotaOfUser(user.id)).toBe(START);
      expect(await db().select().from(tasks).where(eq(tasks.userId, user.id))).toHaveLength(0);
    },
  );
});
