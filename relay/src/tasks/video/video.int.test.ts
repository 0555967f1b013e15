/**
 * OpenAI's video API through the relay with the official `openai` SDK against fake OpenAI and Azure OpenAI video
 * upstreams: submit (JSON and multipart with a reference image), the poller moving jobs queued → in_progress →
 * completed or failed, content streamed, remix, list and delete scoped to the caller; billed per second of output,
 * corrected to the real length and refunded on failure or time-out exactly once, across relays and under concurrency.
 */
import { channels, logs, tasks } from '@turnpike/core/db/schema/index';
import { ChannelStatus } from '@turnpike/core/domain/closed-sets';
import { LogType } from '@turnpike/core/domain/logs';
import { and, eq, sql } from 'drizzle-orm';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildRelayApp } from '../../app.ts';
import { readSample } from '../../metrics/prometheus-text.ts';
import { createRelayTestApp, type RelayTestApp } from '../../testing/relay-test-app.ts';
import { failAndRefund } from '../finish.ts';
import { taskPollerOf } from '../register.ts';
import { HIGH_RES_FACTOR } from './price.ts';
import { completeVideo } from './settle.ts';
import {
  FAKE_MP4,
  FAKE_THUMBNAIL,
  type FakeVideoUpstream,
  startFakeVideoUpstream,
} from './testing/fake-video-upstream.ts';

const QUOTA_PER_UNIT = 500_000;
const GROUP_RATIO = 1.5;
const SORA_2 = 0.1;
const SORA_2_PRO = 0.3;

import { msUntilSeen, restartPoller, VIDEO_TEST_QUOTA, videoBooks } from './testing/video-books.ts';

const START = VIDEO_TEST_QUOTA;
const quotaOf = (price: number, seconds: number, factor = 1, ratio = GROUP_RATIO) =>
  Math.trunc(price * ratio * factor * QUOTA_PER_UNIT * seconds);

let t: RelayTestApp;
let openai: FakeVideoUpstream;
let azure: FakeVideoUpstream;
let baseURL: string;
let openAiChannelId: number;

const { db, payer, quotaOfUser, settled, upstreamIdOf } = videoBooks(
  () => t,
  () => baseURL,
);

async function logsOf(userId: number, type: number) {
  return db()
    .select()
    .from(logs)
    .where(and(eq(logs.userId, userId), eq(logs.type, type)));
}

async function taskRow(id: string) {
  const [row] = await db().select().from(tasks).where(eq(tasks.taskId, id));
  return row;
}

const poll = (now?: number) => taskPollerOf(t.relay).runOnce(now === undefined ? {} : { now });

beforeAll(async () => {
  t = await createRelayTestApp();
  const { options } = t.runtime.deps;
  await options.set('ModelPrice', JSON.stringify({ 'sora-2': SORA_2, 'sora-2-pro': SORA_2_PRO }));
  await options.set('GroupRatio', JSON.stringify({ default: GROUP_RATIO, azure: 1, vip: 1, svip: 1 }));
  openai = await startFakeVideoUpstream({ key: 'sk-openai-upstream' });
  azure = await startFakeVideoUpstream({ key: 'azure-upstream-key', azure: true });
  openAiChannelId = (
    await t.seedChannel({
      type: 1,
      key: 'sk-openai-upstream',
      baseUrl: openai.url,
      models: 'sora-2,sora-2-pro',
      modelMapping: { 'sora-2-pro': 'sora-2-pro-2025-10-06' },
    })
  ).id;
  await t.seedChannel({
    type: 3,
    key: 'azure-upstream-key',
    baseUrl: azure.url,
    models: 'sora-2',
    group: 'azure',
  });
  const relay = await t.startRelay();
  const address = await relay.listen({ port: 0, host: '127.0.0.1' });
  baseURL = `${address}/v1`;
});

afterAll(async () => {
  await t?.close();
  await openai?.close();
  await azure?.close();
});

describe('OpenAI video API through the official SDK', () => {
  it('creates from a form with a reference image, bills the requested seconds once, and hides the upstream id', async () => {
    const { user, client } = await payer();
    const video = await client.videos.create({
      model: 'sora-2-pro',
      prompt: 'a paper boat on a rainy street',
      seconds: '8',
      size: '1792x1024',
      input_reference: await toFile(Buffer.from('fake-png-bytes'), 'ref.png', { type: 'image/png' }),
    });
    expect(video).toMatchObject({ object: 'video', model: 'sora-2-pro', status: 'queued', seconds: '8' });
    expect(video.id).toMatch(/^video_[0-9a-f]{32}$/);
    const sent = openai.requests.find((r) => r.method === 'POST' && r.path === '/v1/videos');
    expect(sent?.headers.authorization).toBe('Bearer sk-openai-upstream');
    expect(sent?.headers['content-type']).toMatch(/^multipart\/form-data/);
    // The model mapping names the upstream's model; the reference image went up as the client sent it.
    expect(sent?.body).toMatchObject({
      model: 'sora-2-pro-2025-10-06',
      prompt: 'a paper boat on a rainy street',
      seconds: '8',
      size: '1792x1024',
      input_reference: { filename: 'ref.png', size: 14, type: 'image/png' },
    });
    const upstreamId = await upstreamIdOf(video.id);
    expect(openai.jobs.has(upstreamId)).toBe(true);
    expect(JSON.stringify(video)).not.toContain(upstreamId);
    // 8 s of sora-2-pro above 720p: $0.30 × 5/3 a second, × the group ratio.
    const charged = quotaOf(SORA_2_PRO, 8, HIGH_RES_FACTOR);
    await settled(user.id, START - charged);
    const consume = await logsOf(user.id, LogType.Consume);
    expect(consume.map((log) => [log.modelName, log.quota])).toEqual([['sora-2-pro', charged]]);
  });

  it('polls queued → in_progress → completed, and streams the content with the variant passed on', async () => {
    const { user, client } = await payer();
    const video = await client.videos.create({ prompt: 'waves at night', seconds: '4' });
    const upstreamId = await upstreamIdOf(video.id);
    await poll();
    expect(await client.videos.retrieve(video.id)).toMatchObject({ status: 'queued', progress: 0 });
    openai.advance(upstreamId, 42);
    const report = (await poll()).report;
    expect(report.updated).toBeGreaterThanOrEqual(1);
    expect(await client.videos.retrieve(video.id)).toMatchObject({ status: 'in_progress', progress: 42 });
    await expect(client.videos.downloadContent(video.id)).rejects.toMatchObject({ status: 400 });
    openai.complete(upstreamId);
    await poll();
    const done = await client.videos.retrieve(video.id);
    expect(done).toMatchObject({
      id: video.id,
      status: 'completed',
      progress: 100,
      seconds: '4',
      error: null,
    });
    expect(done.completed_at).toEqual(expect.any(Number));

    const content = await client.videos.downloadContent(video.id);
    expect(content.headers.get('content-type')).toBe('video/mp4');
    expect(Buffer.from(await content.arrayBuffer()).equals(FAKE_MP4)).toBe(true);
    const thumbnail = await client.videos.downloadContent(video.id, { variant: 'thumbnail' });
    expect(Buffer.from(await thumbnail.arrayBuffer()).equals(FAKE_THUMBNAIL)).toBe(true);
    const contentCalls = openai.requests.filter((r) => r.path === `/v1/videos/${upstreamId}/content`);
    expect(contentCalls.map((r) => r.query.get('variant'))).toEqual(['video', 'thumbnail']);
    expect(contentCalls.every((r) => r.headers.authorization === 'Bearer sk-openai-upstream')).toBe(true);
    // Delivered as long as asked: nothing comes back.
    await settled(user.id, START - quotaOf(SORA_2, 4));
    expect(await logsOf(user.id, LogType.System)).toHaveLength(0);
  });

  it('remixes on the channel of its source at the source length, and lists and deletes only the caller’s own', async () => {
    const { user, client } = await payer();
    const first = await client.videos.create({ prompt: 'a red kite', seconds: '8' });
    openai.complete(await upstreamIdOf(first.id));
    await poll();
    const remixed = await client.videos.remix(first.id, { prompt: 'a blue kite' });
    expect(remixed).toMatchObject({ remixed_from_video_id: first.id, status: 'queued', seconds: '8' });
    const sourceUpstream = await upstreamIdOf(first.id);
    expect(openai.requests.some((r) => r.path === `/v1/videos/${sourceUpstream}/remix`)).toBe(true);
    await settled(user.id, START - 2 * quotaOf(SORA_2, 8));

    const page = await client.videos.list({ limit: 1 });
    expect(page.data.map((v) => v.id)).toEqual([remixed.id]);
    expect(page.has_more).toBe(true);
    const all: string[] = [];
    for await (const video of client.videos.list({ limit: 1 })) all.push(video.id);
    expect(all).toEqual([remixed.id, first.id]);

    // Another user sees none of it.
    const other = await payer();
    expect((await other.client.videos.list()).data).toEqual([]);
    await expect(other.client.videos.retrieve(first.id)).rejects.toMatchObject({ status: 404 });
    await expect(other.client.videos.downloadContent(first.id)).rejects.toMatchObject({ status: 404 });
    await expect(other.client.videos.remix(first.id, { prompt: 'mine now' })).rejects.toMatchObject({
      status: 404,
    });
    await expect(other.client.videos.delete(first.id)).rejects.toMatchObject({ status: 404 });

    // A job still being made cannot be deleted; a finished one is, upstream too.
    await expect(client.videos.delete(remixed.id)).rejects.toMatchObject({ status: 400 });
    expect(await client.videos.delete(first.id)).toEqual({
      id: first.id,
      object: 'video.deleted',
      deleted: true,
    });
    expect(openai.jobs.has(sourceUpstream)).toBe(false);
    await expect(client.videos.retrieve(first.id)).rejects.toMatchObject({ status: 404 });
    expect((await client.videos.list()).data.map((v) => v.id)).toEqual([remixed.id]);
    // The row stays for the task log and the bill.
    expect(await taskRow(first.id)).toMatchObject({ status: 'SUCCESS' });
  });

  it('relays to Azure OpenAI with its path and api-key', async () => {
    const { user, client } = await payer({ group: 'azure' });
    const video = await client.videos.create({ prompt: 'snow on a pine', seconds: '4', size: '1280x720' });
    const sent = azure.requests.find((r) => r.method === 'POST' && r.path === '/openai/v1/videos');
    expect(sent?.headers['api-key']).toBe('azure-upstream-key');
    expect(sent?.headers.authorization).toBeUndefined();
    const upstreamId = await upstreamIdOf(video.id);
    azure.complete(upstreamId);
    await poll();
    expect(await client.videos.retrieve(video.id)).toMatchObject({ status: 'completed' });
    const content = await client.videos.downloadContent(video.id);
    expect(Buffer.from(await content.arrayBuffer()).equals(FAKE_MP4)).toBe(true);
    await settled(user.id, START - quotaOf(SORA_2, 4, 1, 1));
  });

  it('refuses bad input in OpenAI’s shape and charges nothing; an upstream refusal is passed on, uncharged', async () => {
    const { user, client, key } = await payer();
    const before = openai.requests.length;
    await expect(client.videos.create({ prompt: 'x', seconds: '600' as '4' })).rejects.toMatchObject({
      status: 400,
      error: { param: 'seconds' },
    });
    await expect(client.videos.create({ prompt: '' })).rejects.toMatchObject({ status: 400 });
    await expect(client.videos.create({ prompt: 'x', size: 'huge' as '720x1280' })).rejects.toMatchObject({
      status: 400,
    });
    const noBody = await t.relay.inject({
      method: 'POST',
      url: '/v1/videos',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      payload: '{not json',
    });
    expect(noBody.statusCode).toBe(400);
    expect(noBody.json()).toMatchObject({ error: { type: 'invalid_request_error' } });
    const stranger = new OpenAI({ apiKey: 'sk-not-a-key', baseURL, maxRetries: 0 });
    await expect(stranger.videos.create({ prompt: 'x' })).rejects.toMatchObject({ status: 401 });
    await expect(stranger.videos.list()).rejects.toMatchObject({ status: 401 });
    expect(openai.requests.length).toBe(before);

    openai.refuseNext(400, {
      error: {
        message: 'Your request was blocked by our moderation system.',
        type: 'invalid_request_error',
        code: 'moderation_blocked',
        param: null,
      },
    });
    await expect(client.videos.create({ prompt: 'something not allowed' })).rejects.toMatchObject({
      status: 400,
      error: { code: 'moderation_blocked' },
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await quotaOfUser(user.id)).toBe(START);
    expect(await logsOf(user.id, LogType.Consume)).toHaveLength(0);
  });

  it('refuses a submit the balance cannot cover without touching the channel', async () => {
    const { user, client } = await payer({ quota: quotaOf(SORA_2, 4) - 1 });
    const before = openai.requests.length;
    await expect(client.videos.create({ prompt: 'too dear', seconds: '4' })).rejects.toMatchObject({
      status: 403,
      error: { code: 'insufficient_user_quota' },
    });
    expect(openai.requests.length).toBe(before);
    const [channel] = await db().select().from(channels).where(eq(channels.id, openAiChannelId));
    expect(channel?.status).toBe(ChannelStatus.Enabled);
    expect(t.relay.server.listening && (await client.videos.list()).data).toEqual([]);
    expect(await quotaOfUser(user.id)).toBe(quotaOf(SORA_2, 4) - 1);
  });
});

describe('video billing invariants', () => {
  it('never serves more seconds than the balance pays for when submits arrive at once', async () => {
    const price = quotaOf(SORA_2, 4);
    const balance = price * 3 + price / 2;
    const { user, client } = await payer({ quota: balance });
    const results = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) => client.videos.create({ prompt: `clip ${i}`, seconds: '4' })),
    );
    const accepted = results.filter((r) => r.status === 'fulfilled');
    expect(accepted).toHaveLength(3);
    for (const r of results) if (r.status === 'rejected') expect(r.reason).toMatchObject({ status: 403 });
    await settled(user.id, balance - 3 * price);
    const consume = await logsOf(user.id, LogType.Consume);
    // Served seconds × price ≤ the balance, and logs = deductions.
    expect(consume.reduce((sum, log) => sum + log.quota, 0)).toBe(3 * price);
    expect(3 * price).toBeLessThanOrEqual(balance);
  });

  it('gives back the difference once when the clip comes out shorter, however many relays see it', async () => {
    const second = await buildRelayApp(t.runtime.deps, { flushIntervalMs: 20 });
    await second.ready();
    try {
      const { user, client } = await payer();
      const video = await client.videos.create({ prompt: 'a long pan', seconds: '12' });
      await settled(user.id, START - quotaOf(SORA_2, 12));
      openai.complete(await upstreamIdOf(video.id), '8');
      const row = await taskRow(video.id);
      const refund = quotaOf(SORA_2, 12) - quotaOf(SORA_2, 8);
      // Both relays poll, and stalled pollers of other processes complete the same task directly at that moment.
      const outcomes = await Promise.all([
        taskPollerOf(t.relay).runOnce(),
        taskPollerOf(second).runOnce(),
        ...Array.from({ length: 4 }, () =>
          completeVideo(db(), t.runtime.deps.bus, {
            id: row!.id,
            refund,
            now: Date.now(),
            fields: {},
            reason: 'raced',
          }),
        ),
      ]);
      const paid = outcomes.map((o) => ('refunded' in o ? o.refunded : o.report.refundedQuota));
      expect(paid.filter((quota) => quota > 0)).toEqual([refund]);
      expect(await client.videos.retrieve(video.id)).toMatchObject({ status: 'completed' });
      expect(await quotaOfUser(user.id)).toBe(START - quotaOf(SORA_2, 8));
      const refunds = await logsOf(user.id, LogType.System);
      expect(refunds.map((log) => log.quota)).toEqual([refund]);
      // The task keeps what it finally cost, and a failure arriving late finds it finished: nothing more comes back.
      expect((await taskRow(video.id))?.quota).toBe(quotaOf(SORA_2, 8));
      expect(
        await failAndRefund(db(), t.runtime.deps.bus, {
          kind: 'creative',
          id: row!.id,
          reason: 'late',
          now: Date.now(),
        }),
      ).toBe(0);
      expect(await quotaOfUser(user.id)).toBe(START - quotaOf(SORA_2, 8));
    } finally {
      await second.close();
    }
  });

  it('pays either the failure or the shorter length back when both arrive at once, never both', async () => {
    const { user, client } = await payer();
    const video = await client.videos.create({ prompt: 'a contested clip', seconds: '8' });
    await settled(user.id, START - quotaOf(SORA_2, 8));
    const row = await taskRow(video.id);
    const refund = quotaOf(SORA_2, 8) - quotaOf(SORA_2, 4);
    const [completed, failed] = await Promise.all([
      completeVideo(db(), t.runtime.deps.bus, {
        id: row!.id,
        refund,
        now: Date.now(),
        fields: {},
        reason: 'raced',
      }),
      failAndRefund(db(), t.runtime.deps.bus, {
        kind: 'creative',
        id: row!.id,
        reason: 'raced',
        now: Date.now(),
      }),
    ]);
    const status = (await taskRow(video.id))?.status;
    if (status === 'SUCCESS') {
      expect([completed.refunded, failed]).toEqual([refund, 0]);
      expect(await quotaOfUser(user.id)).toBe(START - quotaOf(SORA_2, 4));
    } else {
      expect([completed.refunded, failed]).toEqual([0, quotaOf(SORA_2, 8)]);
      expect(await quotaOfUser(user.id)).toBe(START);
    }
    expect(await logsOf(user.id, LogType.System)).toHaveLength(1);
  });

  it('refunds a failed job once when two relays and a late poller all see the failure', async () => {
    const second = await buildRelayApp(t.runtime.deps, { flushIntervalMs: 20 });
    await second.ready();
    try {
      const { user, client } = await payer();
      const videos = [
        await client.videos.create({ prompt: 'one', seconds: '4' }),
        await client.videos.create({ prompt: 'two', seconds: '8' }),
      ];
      await settled(user.id, START - quotaOf(SORA_2, 4) - quotaOf(SORA_2, 8));
      for (const video of videos) openai.fail(await upstreamIdOf(video.id), 'blocked by moderation');
      const rows = await Promise.all(videos.map((video) => taskRow(video.id)));
      await Promise.all([
        taskPollerOf(t.relay).runOnce(),
        taskPollerOf(second).runOnce(),
        ...rows.map((row) =>
          failAndRefund(db(), t.runtime.deps.bus, {
            kind: 'creative',
            id: row!.id,
            reason: 'stalled poller',
            now: Date.now(),
          }),
        ),
      ]);
      expect(await quotaOfUser(user.id)).toBe(START);
      expect(await logsOf(user.id, LogType.System)).toHaveLength(2);
      const failed = await client.videos.retrieve(videos[0]!.id);
      expect(failed.status).toBe('failed');
      expect(failed.error?.message).toEqual(expect.any(String));
    } finally {
      await second.close();
    }
  });

  it('refunds a job that never finishes once it times out', async () => {
    const { user, client } = await payer();
    const video = await client.videos.create({ prompt: 'forever queued', seconds: '4' });
    await settled(user.id, START - quotaOf(SORA_2, 4));
    await poll(Date.now() + 2 * 60 * 60_000);
    await poll(Date.now() + 2 * 60 * 60_000);
    const row = await taskRow(video.id);
    expect(row).toMatchObject({ status: 'FAILURE', failReason: expect.stringMatching(/timed out/) });
    expect(await quotaOfUser(user.id)).toBe(START);
    expect(await logsOf(user.id, LogType.System)).toHaveLength(1);
  });

  it('counts video submits, polls and refunds on the task metrics', async () => {
    const { user, client } = await payer();
    const video = await client.videos.create({ prompt: 'cut short', seconds: '8' });
    await settled(user.id, START - quotaOf(SORA_2, 8));
    openai.complete(await upstreamIdOf(video.id), '4');
    await poll();
    await settled(user.id, START - quotaOf(SORA_2, 4));
    const scrape = await t.relay.inject({ method: 'GET', url: '/metrics' });
    const text = scrape.body;
    expect(
      readSample(text, 'turnpike_task_submits_total', {
        provider: 'video',
        action: 'GENERATE',
        outcome: 'accepted',
      }),
    ).toBeGreaterThan(0);
    expect(
      readSample(text, 'turnpike_task_refunds_total', { provider: 'video', reason: 'length' }),
    ).toBeGreaterThan(0);
    expect(
      readSample(text, 'turnpike_task_refunds_total', { provider: 'video', reason: 'timeout' }),
    ).toBeGreaterThan(0);
    expect(
      readSample(text, 'turnpike_task_polls_total', { provider: 'video', outcome: 'updated' }),
    ).toBeGreaterThan(0);
  });
});

/** Makes a task's stored state 5 s old, so every read of it may ask the upstream. */
const ageStoredState = (id: string) =>
  db()
    .update(tasks)
    .set({ updatedAt: sql`${tasks.updatedAt} - 5` })
    .where(eq(tasks.taskId, id));

describe('a retrieve of an unfinished video', () => {
  it('sees a finished clip completed within 2 s through the SDK, with the poller at its 15 s default', async () => {
    const { user, client } = await payer();
    const video = await client.videos.create({ prompt: 'a lighthouse at dusk', seconds: '4' });
    const upstreamId = await upstreamIdOf(video.id);
    await restartPoller(t.relay);
    const delay = await msUntilSeen(
      () => openai.complete(upstreamId),
      async () => (await client.videos.retrieve(video.id)).status === 'completed',
    );
    expect(delay).toBeLessThan(2_000);
    expect(await client.videos.retrieve(video.id)).toMatchObject({ status: 'completed', progress: 100 });
    const content = await client.videos.downloadContent(video.id);
    expect(Buffer.from(await content.arrayBuffer()).equals(FAKE_MP4)).toBe(true);
    await settled(user.id, START - quotaOf(SORA_2, 4));
  });

  it('settles a shorter clip once when the poller and many retrieves on two relays see it at once', async () => {
    const second = await buildRelayApp(t.runtime.deps, { flushIntervalMs: 20 });
    await second.ready();
    try {
      const { user, client, key } = await payer();
      const video = await client.videos.create({ prompt: 'a contested pan', seconds: '12' });
      await settled(user.id, START - quotaOf(SORA_2, 12));
      const upstreamId = await upstreamIdOf(video.id);
      await ageStoredState(video.id);
      openai.complete(upstreamId, '8');
      const asked = () =>
        openai.requests.filter((r) => r.method === 'GET' && r.path === `/v1/videos/${upstreamId}`).length;
      const before = asked();
      const [, ...seen] = await Promise.all([
        taskPollerOf(t.relay).runOnce(),
        ...Array.from({ length: 12 }, () => client.videos.retrieve(video.id)),
        ...Array.from({ length: 12 }, async () => {
          const answer = await second.inject({
            method: 'GET',
            url: `/v1/videos/${video.id}`,
            headers: { authorization: `Bearer ${key}` },
          });
          return answer.json() as { status: string };
        }),
      ]);
      expect(seen.map((v) => v.status)).toEqual(Array(24).fill('completed'));
      // One call for the poller and at most one for each relay's reads.
      expect(asked() - before).toBeLessThanOrEqual(3);
      const refund = quotaOf(SORA_2, 12) - quotaOf(SORA_2, 8);
      await settled(user.id, START - quotaOf(SORA_2, 8));
      expect((await logsOf(user.id, LogType.System)).map((log) => log.quota)).toEqual([refund]);
      // Logs = deductions: what was charged less what came back is what the balance lost.
      const charged = (await logsOf(user.id, LogType.Consume)).reduce((sum, log) => sum + log.quota, 0);
      expect(charged - refund).toBe(START - (await quotaOfUser(user.id)));
      expect((await taskRow(video.id))?.quota).toBe(quotaOf(SORA_2, 8));
    } finally {
      await second.close();
    }
  });

  it('refunds a failed job once when retrieves see the failure first', async () => {
    const { user, client } = await payer();
    const video = await client.videos.create({ prompt: 'a refused clip', seconds: '8' });
    await settled(user.id, START - quotaOf(SORA_2, 8));
    await ageStoredState(video.id);
    openai.fail(await upstreamIdOf(video.id), 'blocked by moderation');
    const seen = await Promise.all(Array.from({ length: 8 }, () => client.videos.retrieve(video.id)));
    expect(seen.map((v) => v.status)).toEqual(Array(8).fill('failed'));
    expect(seen[0]?.error?.message).toMatch(/blocked by moderation/);
    await poll();
    expect(await quotaOfUser(user.id)).toBe(START);
    expect(await logsOf(user.id, LogType.System)).toHaveLength(1);
  });
});
