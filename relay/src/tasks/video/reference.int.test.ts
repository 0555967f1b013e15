/**
 * The reference's own video routes for its existing clients (its unified `/v1/video/generations`, Kling's native
 * `/kling/v1/videos/*`, Jimeng's `/jimeng/`), on the same tasks, billing and poller as `/v1/videos`; and a Kling
 * channel stored under the old type 61 renumbered to the reference's 50 by migration 0013, still serving.
 */
import { readFileSync } from 'node:fs';
import { channels, logs } from '@turnpike/core/db/schema/index';
import { LogType } from '@turnpike/core/domain/logs';
import { ProviderTypeId } from '@turnpike/core/providers/catalogue';
import { and, eq, sql } from 'drizzle-orm';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRelayTestApp, type RelayTestApp } from '../../testing/relay-test-app.ts';
import { waitFor } from '../../testing/wait.ts';
import { taskPollerOf } from '../register.ts';
import {
  FAKE_JIMENG_MP4,
  type FakeJimengUpstream,
  startFakeJimengUpstream,
} from './testing/fake-jimeng-upstream.ts';
import {
  FAKE_KLING_MP4,
  type FakeKlingUpstream,
  startFakeKlingUpstream,
} from './testing/fake-kling-upstream.ts';

import { msUntilSeen, restartPoller, VIDEO_TEST_QUOTA, videoBooks } from './testing/video-books.ts';

const START = VIDEO_TEST_QUOTA;
const KLING = 'kling-v2-1';
const LEGACY = 'kling-legacy';
const JIMENG = 'jimeng_t2v_v30';
const PRICES: Record<string, number> = { [KLING]: 0.05, [LEGACY]: 0.05, [JIMENG]: 0.04 };
const quotaOf = (model: string, seconds: number) => Math.trunc((PRICES[model] as number) * 500_000 * seconds);

let t: RelayTestApp;
let kling: FakeKlingUpstream;
let jimeng: FakeJimengUpstream;
let origin: string;
let legacyChannelId: number;

const { db, payer, quotaOfUser, settled, upstreamIdOf } = videoBooks(
  () => t,
  () => `${origin}/v1`,
);

async function call(key: string, method: 'GET' | 'POST', path: string, body?: unknown) {
  const answer = await fetch(`${origin}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  // biome-ignore lint/suspicious/noExplicitAny: the answers of three APIs' shapes, read by the assertions below
  return { status: answer.status, body: (await answer.json()) as Record<string, any> };
}

/** The last submit the Kling fake received. */
const lastKlingTask = () =>
  waitFor(async () => [...kling.requests].reverse().find((r) => r.method === 'POST'));

const poll = () => taskPollerOf(t.relay).runOnce();

/** The upstream's own id of a gateway task (`<kind>/<task_id>` for Kling). */
const upstreamTaskOf = async (id: string) => (await upstreamIdOf(id)).split('/').at(-1) as string;

beforeAll(async () => {
  t = await createRelayTestApp();
  const { options } = t.runtime.deps;
  await options.set('ModelPrice', JSON.stringify(PRICES));
  await options.set('GroupRatio', JSON.stringify({ default: 1, vip: 1, svip: 1 }));
  kling = await startFakeKlingUpstream('ak-ref', 'sk-ref');
  jimeng = await startFakeJimengUpstream('AKLTref', 'cmVmc2VjcmV0');
  await t.seedChannel({
    type: ProviderTypeId.Kling,
    key: 'ak-ref|sk-ref',
    baseUrl: kling.url,
    models: KLING,
  });
  await t.seedChannel({
    type: ProviderTypeId.Jimeng,
    key: 'AKLTref|cmVmc2VjcmV0',
    baseUrl: jimeng.url,
    models: JIMENG,
  });
  // A Kling channel as it was stored before the renumbering (type 61), then migration 0013's statements.
  const legacy = await t.seedChannel({ type: 50, key: 'ak-ref|sk-ref', baseUrl: kling.url, models: LEGACY });
  legacyChannelId = legacy.id;
  await db().update(channels).set({ type: 61 }).where(eq(channels.id, legacy.id));
  const statements = readFileSync(
    new URL('../../../../core/migrations/0013_kling_type_50.sql', import.meta.url),
    'utf8',
  )
    .split('--> statement-breakpoint')
    .map((s) => s.replace(/^--.*$/gm, '').trim())
    .filter(Boolean);
  for (const statement of statements) await db().execute(sql.raw(statement));
  const relay = await t.startRelay();
  origin = await relay.listen({ port: 0, host: '127.0.0.1' });
});

afterAll(async () => {
  await t?.close();
  await Promise.all([kling?.close(), jimeng?.close()]);
});

describe('the unified /v1/video/generations', () => {
  it('creates, reports progress and points a finished video at the gateway, billed per second', async () => {
    const { user, key } = await payer();
    const created = await call(key, 'POST', '/v1/video/generations', {
      model: KLING,
      prompt: 'a heron',
      duration: 10,
      width: 720,
      height: 1280,
    });
    expect(created).toMatchObject({
      status: 200,
      body: { status: 'queued', task_id: expect.stringMatching(/^video_/) },
    });
    expect((await lastKlingTask()).body).toMatchObject({
      duration: '10',
      aspect_ratio: '9:16',
      prompt: 'a heron',
    });
    await settled(user.id, START - quotaOf(KLING, 10));
    const id = created.body.task_id as string;
    expect((await call(key, 'GET', `/v1/video/generations/${id}`)).body).toMatchObject({
      task_id: id,
      status: 'queued',
    });

    kling.succeed(await upstreamTaskOf(id), '10');
    await poll();
    const done = await call(key, 'GET', `/v1/video/generations/${id}`);
    expect(done.body).toEqual({
      task_id: id,
      status: 'completed',
      url: `${origin}/v1/videos/${id}/content`,
      format: 'mp4',
      metadata: { duration: 10, width: 720, height: 1280 },
      error: null,
    });
    const clip = await fetch(done.body.url as string, { headers: { authorization: `Bearer ${key}` } });
    expect(Buffer.from(await clip.arrayBuffer()).equals(FAKE_KLING_MP4)).toBe(true);
    expect(await quotaOfUser(user.id)).toBe(START - quotaOf(KLING, 10));
  });

  it("answers another caller's task as not found, in OpenAI's shape", async () => {
    const owner = await payer();
    const created = await call(owner.key, 'POST', '/v1/video/generations', { model: KLING, prompt: 'mine' });
    const stranger = await payer();
    const answer = await call(stranger.key, 'GET', `/v1/video/generations/${created.body.task_id}`);
    expect(answer).toMatchObject({ status: 404, body: { error: { message: expect.any(String) } } });
    expect(
      (await call('sk-nobody', 'POST', '/v1/video/generations', { model: KLING, prompt: 'x' })).status,
    ).toBe(401);
  });
});

describe("Kling's native paths", () => {
  it('submit and query in Kling’s shapes; a failed task is refunded once', async () => {
    const { user, key } = await payer();
    const created = await call(key, 'POST', '/kling/v1/videos/text2video', {
      model_name: KLING,
      prompt: 'a fox',
      duration: '5',
      aspect_ratio: '1:1',
      mode: 'std',
    });
    expect(created).toMatchObject({
      status: 200,
      body: { code: 0, data: { task_id: expect.stringMatching(/^video_/), task_status: 'submitted' } },
    });
    expect((await lastKlingTask()).body).toMatchObject({
      duration: '5',
      aspect_ratio: '1:1',
      model_name: KLING,
    });
    await settled(user.id, START - quotaOf(KLING, 5));
    const id = created.body.data.task_id as string;
    await poll();
    kling.fail(await upstreamTaskOf(id), 'risk control');
    await Promise.all([poll(), poll()]);
    const answer = await call(key, 'GET', `/kling/v1/videos/text2video/${id}`);
    expect(answer.body).toMatchObject({
      code: 0,
      data: { task_id: id, task_status: 'failed', task_status_msg: expect.stringMatching(/risk control/) },
    });
    expect(await quotaOfUser(user.id)).toBe(START);
    const refunds = await db()
      .select()
      .from(logs)
      .where(and(eq(logs.userId, user.id), eq(logs.type, LogType.System)));
    expect(refunds).toHaveLength(1);
  });

  it('returns the finished clip with its duration; an image2video without an image is refused in Kling’s shape, uncharged', async () => {
    const { user, key } = await payer();
    const refused = await call(key, 'POST', '/kling/v1/videos/image2video', {
      model_name: KLING,
      prompt: 'x',
    });
    expect(refused).toMatchObject({
      status: 400,
      body: { code: 1200, message: expect.stringMatching(/image/) },
    });
    expect(await quotaOfUser(user.id)).toBe(START);

    const created = await call(key, 'POST', '/kling/v1/videos/image2video', {
      model_name: KLING,
      prompt: 'the fox runs',
      image: 'https://images.example/fox.png',
    });
    expect(created.status).toBe(200);
    expect((await lastKlingTask()).path).toBe('/v1/videos/image2video');
    const id = created.body.data.task_id as string;
    await poll();
    kling.succeed(await upstreamTaskOf(id), '5');
    await poll();
    const answer = await call(key, 'GET', `/kling/v1/videos/image2video/${id}`);
    expect(answer.body.data).toMatchObject({
      task_status: 'succeed',
      task_result: { videos: [{ id, url: `${origin}/v1/videos/${id}/content`, duration: '5' }] },
    });
    expect((await call('sk-nobody', 'GET', `/kling/v1/videos/image2video/${id}`)).body).toMatchObject({
      code: 1000,
    });
  });
});

describe("Jimeng's native route", () => {
  it('submits and reads results in Jimeng’s shape', async () => {
    const { user, key } = await payer();
    const submitted = await call(key, 'POST', '/jimeng/?Action=CVSync2AsyncSubmitTask&Version=2022-08-31', {
      req_key: JIMENG,
      prompt: 'a crane',
      frames: 241,
      aspect_ratio: '9:16',
    });
    expect(submitted.body).toMatchObject({
      code: 10000,
      data: { task_id: expect.stringMatching(/^video_/) },
    });
    expect(jimeng.requests.filter((r) => r.action === 'CVSync2AsyncSubmitTask').at(-1)?.body).toMatchObject({
      req_key: JIMENG,
      frames: 241,
      aspect_ratio: '9:16',
    });
    await settled(user.id, START - quotaOf(JIMENG, 10));
    const id = submitted.body.data.task_id as string;
    const read = () =>
      call(key, 'POST', '/jimeng/?Action=CVSync2AsyncGetResult&Version=2022-08-31', {
        req_key: JIMENG,
        task_id: id,
      });
    expect((await read()).body).toMatchObject({ code: 10000, data: { status: 'in_queue' } });
    const upstream = jimeng.requests.filter((r) => r.action === 'CVSync2AsyncSubmitTask').length;
    expect(upstream).toBeGreaterThan(0);
    await poll();
    const taskId = jimeng.requests.filter((r) => r.action === 'CVSync2AsyncGetResult').at(-1)?.body
      ?.task_id as string;
    jimeng.finish(taskId);
    await poll();
    const done = await read();
    expect(done.body).toMatchObject({
      code: 10000,
      data: { status: 'done', video_url: `${origin}/v1/videos/${id}/content` },
    });
    const clip = await fetch(done.body.data.video_url as string, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(Buffer.from(await clip.arrayBuffer()).equals(FAKE_JIMENG_MP4)).toBe(true);
  });
});

describe('reads of a video the upstream just finished', () => {
  it('see it finished within 2 s on the unified, Kling and Jimeng routes, with the poller at its 15 s default', async () => {
    const { user, key } = await payer();
    const unified = (
      await call(key, 'POST', '/v1/video/generations', { model: KLING, prompt: 'a lark', duration: 5 })
    ).body.task_id as string;
    const native = (
      await call(key, 'POST', '/kling/v1/videos/text2video', {
        model_name: KLING,
        prompt: 'an owl',
        duration: '5',
      })
    ).body.data.task_id as string;
    const volc = (
      await call(key, 'POST', '/jimeng/?Action=CVSync2AsyncSubmitTask&Version=2022-08-31', {
        req_key: JIMENG,
        prompt: 'a swan',
        frames: 121,
      })
    ).body.data.task_id as string;
    await settled(user.id, START - 2 * quotaOf(KLING, 5) - quotaOf(JIMENG, 5));
    const [unifiedUpstream, nativeUpstream, volcUpstream] = await Promise.all(
      [unified, native, volc].map(upstreamTaskOf),
    );
    await restartPoller(t.relay);
    const delays = [
      await msUntilSeen(
        () => kling.succeed(unifiedUpstream as string, '5'),
        async () => (await call(key, 'GET', `/v1/video/generations/${unified}`)).body.status === 'completed',
      ),
      await msUntilSeen(
        () => kling.succeed(nativeUpstream as string, '5'),
        async () =>
          (await call(key, 'GET', `/kling/v1/videos/text2video/${native}`)).body.data.task_status ===
          'succeed',
      ),
      await msUntilSeen(
        () => jimeng.finish(volcUpstream as string),
        async () =>
          (
            await call(key, 'POST', '/jimeng/?Action=CVSync2AsyncGetResult&Version=2022-08-31', {
              req_key: JIMENG,
              task_id: volc,
            })
          ).body.data.status === 'done',
      ),
    ];
    for (const delay of delays) expect(delay).toBeLessThan(2_000);
    // Delivered as long as asked: nothing came back.
    expect(await quotaOfUser(user.id)).toBe(START - 2 * quotaOf(KLING, 5) - quotaOf(JIMENG, 5));
  });
});

describe('migration 0013', () => {
  it('renumbers a Kling channel of type 61 to 50, and it still serves', async () => {
    const [row] = await db().select().from(channels).where(eq(channels.id, legacyChannelId));
    expect(row?.type).toBe(ProviderTypeId.Kling);
    const { user, key } = await payer();
    const client = new OpenAI({ apiKey: key, baseURL: `${origin}/v1`, maxRetries: 0 });
    const video = await client.videos.create({
      model: LEGACY,
      prompt: 'an old channel',
      seconds: '5' as '4',
    });
    expect(video.status).toBe('queued');
    expect((await lastKlingTask()).body).toMatchObject({ model_name: LEGACY });
    await settled(user.id, START - quotaOf(LEGACY, 5));
  });
});
