/**
 * Veo on the Gemini API (channel type 60) behind OpenAI's video API: the official `openai` SDK creates, polls and
 * downloads while the relay speaks predictLongRunning and operation polling to a fake Gemini API that checks its
 * key; billed per second, refunded once on failure or when the safety filters drop the video.
 */
import { logs } from '@turnpike/core/db/schema/index';
import { LogType } from '@turnpike/core/domain/logs';
import { ProviderTypeId } from '@turnpike/core/providers/catalogue';
import { and, eq } from 'drizzle-orm';
import { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRelayTestApp, type RelayTestApp } from '../../testing/relay-test-app.ts';
import { taskPollerOf } from '../register.ts';
import { FAKE_VEO_MP4, type FakeVeoUpstream, startFakeVeoUpstream } from './testing/fake-veo-upstream.ts';
import { VIDEO_TEST_QUOTA, videoBooks } from './testing/video-books.ts';

const QUOTA_PER_UNIT = 500_000;
const VEO_FAST = 0.15;
const START = VIDEO_TEST_QUOTA;
const MODEL = 'veo-3.1-fast-generate-preview';
const quotaOf = (price: number, seconds: number) => Math.trunc(price * QUOTA_PER_UNIT * seconds);

let t: RelayTestApp;
let veo: FakeVeoUpstream;
let baseURL: string;

const { db, payer, quotaOfUser, settled, upstreamIdOf } = videoBooks(
  () => t,
  () => baseURL,
);

const operationOf = upstreamIdOf;

const poll = () => taskPollerOf(t.relay).runOnce();

beforeAll(async () => {
  t = await createRelayTestApp();
  await t.runtime.deps.options.set('GroupRatio', JSON.stringify({ default: 1, vip: 1, svip: 1 }));
  veo = await startFakeVeoUpstream('gemini-upstream-key');
  await t.seedChannel({
    type: ProviderTypeId.GeminiVeo,
    key: 'gemini-upstream-key',
    baseUrl: veo.url,
    models: MODEL,
  });
  const relay = await t.startRelay();
  baseURL = `${await relay.listen({ port: 0, host: '127.0.0.1' })}/v1`;
});

afterAll(async () => {
  await t?.close();
  await veo?.close();
});

describe('Veo through the OpenAI video API', () => {
  it('converts the create, polls the operation to the end and downloads the clip without leaking the key', async () => {
    const { user, client } = await payer();
    const video = await client.videos.create({
      model: MODEL,
      prompt: 'a fox in snow',
      seconds: '8',
      size: '1280x720',
    });
    expect(video).toMatchObject({
      object: 'video',
      model: MODEL,
      status: 'queued',
      seconds: '8',
      size: '1280x720',
    });
    const sent = veo.requests.find((r) => r.path === `/v1beta/models/${MODEL}:predictLongRunning`);
    expect(sent?.headers['x-goog-api-key']).toBe('gemini-upstream-key');
    expect(sent?.body).toEqual({
      instances: [{ prompt: 'a fox in snow' }],
      parameters: { aspectRatio: '16:9', durationSeconds: 8, resolution: '720p' },
    });
    // The built-in price: $0.15 a second, at any resolution.
    await settled(user.id, START - quotaOf(VEO_FAST, 8));

    const name = await operationOf(video.id);
    expect(JSON.stringify(video)).not.toContain(name);
    await poll();
    expect(await client.videos.retrieve(video.id)).toMatchObject({ status: 'in_progress' });
    veo.finish(name);
    await poll();
    expect(await client.videos.retrieve(video.id)).toMatchObject({ status: 'completed', progress: 100 });
    const content = await client.videos.downloadContent(video.id);
    expect(content.headers.get('content-type')).toBe('video/mp4');
    expect(Buffer.from(await content.arrayBuffer()).equals(FAKE_VEO_MP4)).toBe(true);
    // The key went to the Gemini API only; the storage the download redirected to never saw it.
    const storage = veo.requests.filter((r) => r.path.startsWith('/storage/'));
    expect(storage).toHaveLength(1);
    expect(storage[0]?.headers['x-goog-api-key']).toBeUndefined();
    await expect(client.videos.downloadContent(video.id, { variant: 'thumbnail' })).rejects.toMatchObject({
      status: 400,
    });
    await expect(client.videos.remix(video.id, { prompt: 'again' })).rejects.toMatchObject({ status: 400 });
    expect(await quotaOfUser(user.id)).toBe(START - quotaOf(VEO_FAST, 8));
  });

  it('sends a portrait 1080p request with its first frame from a data URL', async () => {
    const { client } = await payer();
    const before = veo.requests.length;
    const answer = await fetch(`${baseURL}/videos`, {
      method: 'POST',
      headers: {
        authorization: client.apiKey ? `Bearer ${client.apiKey}` : '',
        'content-type': 'application/json',
      },
      body: JSON.stringify({
        model: MODEL,
        prompt: 'a lighthouse',
        seconds: 4,
        size: '1080x1920',
        input_reference: { image_url: 'data:image/png;base64,aGVsbG8=' },
      }),
    });
    expect(answer.status).toBe(200);
    const sent = veo.requests.slice(before).find((r) => r.path.endsWith(':predictLongRunning'));
    expect(sent?.body).toEqual({
      instances: [
        { prompt: 'a lighthouse', image: { mimeType: 'image/png', bytesBase64Encoded: 'aGVsbG8=' } },
      ],
      parameters: { aspectRatio: '9:16', durationSeconds: 4, resolution: '1080p' },
    });
  });

  it('refuses a reference file it cannot send, uncharged', async () => {
    const { user, client } = await payer();
    await expect(
      client.videos.create({
        model: MODEL,
        prompt: 'with a file',
        input_reference: await toFile(Buffer.from('png'), 'ref.png', { type: 'image/png' }),
      }),
    ).rejects.toMatchObject({ status: 400 });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await quotaOfUser(user.id)).toBe(START);
  });

  it('refunds once a failed operation and one the safety filters emptied', async () => {
    const { user, client } = await payer();
    const failed = await client.videos.create({ model: MODEL, prompt: 'one', seconds: '4' });
    const filtered = await client.videos.create({ model: MODEL, prompt: 'two', seconds: '8' });
    await settled(user.id, START - quotaOf(VEO_FAST, 4) - quotaOf(VEO_FAST, 8));
    veo.fail(await operationOf(failed.id), 'quota exceeded upstream');
    veo.filter(await operationOf(filtered.id), 'The prompt could not be submitted.');
    await Promise.all([poll(), poll()]);
    await poll();
    expect(await client.videos.retrieve(failed.id)).toMatchObject({
      status: 'failed',
      error: { message: expect.stringMatching(/quota exceeded upstream/) },
    });
    expect(await client.videos.retrieve(filtered.id)).toMatchObject({
      status: 'failed',
      error: { message: expect.stringMatching(/could not be submitted/) },
    });
    expect(await quotaOfUser(user.id)).toBe(START);
    const refunds = await db()
      .select()
      .from(logs)
      .where(and(eq(logs.userId, user.id), eq(logs.type, LogType.System)));
    expect(refunds).toHaveLength(2);
  });
});
