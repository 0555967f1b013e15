/**
 * Kling (channel type 61) behind OpenAI's video API: the official `openai` SDK creates, polls and downloads while the
 * relay signs a fresh JWT from the channel's access and secret keys for a fake Kling API that checks it; 5 or 10
 * second clips only, billed per second and settled on the reported length, refunded once on failure.
 */
import { logs } from '@turnpike/core/db/schema/index';
import { LogType } from '@turnpike/core/domain/logs';
import { ProviderTypeId } from '@turnpike/core/providers/catalogue';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRelayTestApp, type RelayTestApp } from '../../testing/relay-test-app.ts';
import { waitFor } from '../../testing/wait.ts';
import { taskPollerOf } from '../register.ts';
import {
  FAKE_KLING_MP4,
  type FakeKlingUpstream,
  startFakeKlingUpstream,
} from './testing/fake-kling-upstream.ts';

const PRICE = 0.05;

import { VIDEO_TEST_QUOTA, videoBooks } from './testing/video-books.ts';

const START = VIDEO_TEST_QUOTA;
const MODEL = 'kling-v2-1';
const quotaOf = (seconds: number) => Math.trunc(PRICE * 500_000 * seconds);

let t: RelayTestApp;
let kling: FakeKlingUpstream;
let baseURL: string;

const { db, payer, quotaOfUser, settled, upstreamIdOf } = videoBooks(
  () => t,
  () => baseURL,
);

const klingTaskOf = async (id: string) => (await upstreamIdOf(id)).split('/')[1] as string;

const poll = () => taskPollerOf(t.relay).runOnce();

beforeAll(async () => {
  t = await createRelayTestApp();
  const { options } = t.runtime.deps;
  await options.set('ModelPrice', JSON.stringify({ [MODEL]: PRICE }));
  await options.set('GroupRatio', JSON.stringify({ default: 1, vip: 1, svip: 1 }));
  kling = await startFakeKlingUpstream('ak-test-access', 'sk-test-secret');
  await t.seedChannel({
    type: ProviderTypeId.Kling,
    key: 'ak-test-access|sk-test-secret',
    baseUrl: kling.url,
    models: MODEL,
  });
  const relay = await t.startRelay();
  baseURL = `${await relay.listen({ port: 0, host: '127.0.0.1' })}/v1`;
});

afterAll(async () => {
  await t?.close();
  await kling?.close();
});

describe('Kling through the OpenAI video API', () => {
  it('signs each call, polls to the end, settles on the reported length and downloads without credentials', async () => {
    const { user, client } = await payer();
    const video = await client.videos.create({
      model: MODEL,
      prompt: 'a koi pond',
      seconds: '10' as '4',
      size: '1280x720',
    });
    expect(video).toMatchObject({ status: 'queued', seconds: '10', model: MODEL });
    const sent = kling.requests.find((r) => r.method === 'POST' && r.path === '/v1/videos/text2video');
    expect(sent?.body).toEqual({
      model_name: MODEL,
      prompt: 'a koi pond',
      duration: '10',
      aspect_ratio: '16:9',
      mode: 'std',
    });
    await settled(user.id, START - quotaOf(10));

    const taskId = await klingTaskOf(video.id);
    kling.process(taskId);
    await poll();
    expect(await client.videos.retrieve(video.id)).toMatchObject({ status: 'in_progress' });
    kling.succeed(taskId, '5');
    await poll();
    expect(await client.videos.retrieve(video.id)).toMatchObject({ status: 'completed', seconds: '5' });
    // Five seconds delivered of ten charged: five come back, once.
    expect(await quotaOfUser(user.id)).toBe(START - quotaOf(5));
    await poll();
    expect(await quotaOfUser(user.id)).toBe(START - quotaOf(5));

    const content = await client.videos.downloadContent(video.id);
    expect(Buffer.from(await content.arrayBuffer()).equals(FAKE_KLING_MP4)).toBe(true);
    const cdn = kling.requests.filter((r) => r.path.startsWith('/cdn/'));
    expect(cdn).toHaveLength(1);
    expect(cdn[0]?.headers.authorization).toBeUndefined();
    // Every API call carried a token the fake verified (a bad one would have been a 401 and no task at all).
    expect(
      kling.requests
        .filter((r) => r.path.startsWith('/v1/'))
        .every((r) => /^Bearer ey/.test(r.headers.authorization ?? '')),
    ).toBe(true);
  });

  it('defaults to 5 seconds and refuses a length Kling does not make, uncharged', async () => {
    const { user, client } = await payer();
    const video = await client.videos.create({ model: MODEL, prompt: 'rain', size: '720x720' as '720x1280' });
    expect(video.seconds).toBe('5');
    await settled(user.id, START - quotaOf(5));
    await expect(client.videos.create({ model: MODEL, prompt: 'rain', seconds: '8' })).rejects.toMatchObject({
      status: 400,
      error: { param: 'seconds' },
    });
    const last = kling.requests.filter((r) => r.method === 'POST').at(-1);
    expect(last?.body).toMatchObject({ duration: '5', aspect_ratio: '1:1' });
    expect(await quotaOfUser(user.id)).toBe(START - quotaOf(5));
  });

  it('answers 503 and charges nothing when the channel key cannot sign a call', async () => {
    const broken = await t.seedChannel({
      type: ProviderTypeId.Kling,
      key: 'only-an-access-key',
      baseUrl: kling.url,
      models: 'kling-broken',
    });
    await t.runtime.deps.bus.publish({ type: 'channels.changed', ids: [broken.id] });
    const { user, client } = await payer();
    const before = kling.requests.length;
    await waitFor(async () => {
      const error = await client.videos
        .create({ model: 'kling-broken', prompt: 'x', seconds: '5' as '4' })
        .catch((e: unknown) => e);
      return (error as { status?: number }).status === 503 ? error : undefined;
    });
    expect(kling.requests.length).toBe(before);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await quotaOfUser(user.id)).toBe(START);
  });

  it('refunds a failed task once', async () => {
    const { user, client } = await payer();
    const video = await client.videos.create({ model: MODEL, prompt: 'a storm', seconds: '5' as '4' });
    await settled(user.id, START - quotaOf(5));
    kling.fail(await klingTaskOf(video.id), 'content moderation');
    await Promise.all([poll(), poll()]);
    await poll();
    expect(await client.videos.retrieve(video.id)).toMatchObject({
      status: 'failed',
      error: { message: expect.stringMatching(/moderation/) },
    });
    expect(await quotaOfUser(user.id)).toBe(START);
    const refunds = await db()
      .select()
      .from(logs)
      .where(and(eq(logs.userId, user.id), eq(logs.type, LogType.System)));
    expect(refunds).toHaveLength(1);
  });
});
