import { midjourneys, tasks } from '@turnpike/core/db/schema/index';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ConsoleClient,
  createTestApp,
  registerUser,
  setupRoot,
  type TestApp,
} from '../../testing/test-app.ts';

describe('drawing and creative task logs', () => {
  let t: TestApp;
  let root: ConsoleClient;
  let ann: ConsoleClient;
  let bob: ConsoleClient;
  /** Drawing tasks are timed in milliseconds, creative tasks in seconds. */
  const ms0 = Date.UTC(2026, 0, 10);
  const s0 = Math.floor(ms0 / 1000);
  const hourMs = 3600_000;

  beforeAll(async () => {
    t = await createTestApp();
    root = await setupRoot(t.app);
    ann = await registerUser(t.app, 'ann');
    bob = await registerUser(t.app, 'bob');
    const db = t.runtime.deps.db;
    await db.insert(midjourneys).values([
      {
        userId: ann.userId!,
        mjId: 'mj-ann-1',
        action: 'IMAGINE',
        prompt: 'a lighthouse',
        status: 'SUCCESS',
        progress: '100%',
        submitTime: ms0,
        finishTime: ms0 + 60_000,
        imageUrl: 'https://cdn.upstream.example/ann-1.png',
        channelId: 3,
        code: 1,
      },
      {
        userId: ann.userId!,
        mjId: 'mj-ann-2',
        action: 'UPSCALE',
        prompt: 'a lighthouse, upscaled',
        status: 'IN_PROGRESS',
        progress: '40%',
        submitTime: ms0 + hourMs,
        channelId: 4,
      },
      {
        userId: bob.userId!,
        mjId: 'mj-bob-1',
        action: 'IMAGINE',
        prompt: "bob's private prompt",
        status: 'FAILURE',
        failReason: 'banned prompt',
        submitTime: ms0 + 2 * hourMs,
        channelId: 3,
      },
    ]);
    await db.insert(tasks).values([
      {
        userId: ann.userId!,
        taskId: 'suno-ann-1',
        platform: 'suno',
        action: 'MUSIC',
        status: 'SUCCESS',
        progress: '100%',
        submitTime: s0,
        finishTime: s0 + 90,
        channelId: 7,
        properties: { input: 'a song about tea' },
        data: [{ audio_url: 'https://cdn.upstream.example/a.mp3' }],
      },
      {
        userId: bob.userId!,
        taskId: 'suno-bob-1',
        platform: 'suno',
        action: 'LYRICS',
        status: 'QUEUED',
        submitTime: s0 + 3600,
        channelId: 8,
      },
    ]);
  });
  afterAll(async () => {
    await t.close();
  });

  it('lists every drawing task for an admin, newest first, with the channel', async () => {
    const response = await root.get('/api/mj/?p=0');
    expect(response.statusCode).toBe(200);
    const rows = response.json().data;
    expect(rows.map((r: { mj_id: string }) => r.mj_id)).toEqual(['mj-bob-1', 'mj-ann-2', 'mj-ann-1']);
    expect(rows[2]).toMatchObject({
      user_id: ann.userId,
      action: 'IMAGINE',
      status: 'SUCCESS',
      progress: '100%',
      submit_time: ms0,
      finish_time: ms0 + 60_000,
      channel_id: 3,
      code: 1,
    });
  });

  it('filters drawing tasks by channel, task id and a time range in milliseconds', async () => {
    const ids = async (query: string) =>
      (await root.get(`/api/mj/?${query}`)).json().data.map((r: { mj_id: string }) => r.mj_id);
    expect(await ids('channel_id=3')).toEqual(['mj-bob-1', 'mj-ann-1']);
    expect(await ids('mj_id=mj-ann-2')).toEqual(['mj-ann-2']);
    expect(await ids(`start_timestamp=${ms0 + 1}&end_timestamp=${ms0 + hourMs}`)).toEqual(['mj-ann-2']);
    // The same instant in seconds is long before every task: times here are milliseconds.
    expect(await ids(`end_timestamp=${s0 + 7200}`)).toEqual([]);
    expect(await ids('channel_id=&mj_id=&start_timestamp=')).toHaveLength(3);
  });

  it('pages drawing tasks from page 0', async () => {
    const first = (await root.get('/api/mj/?p=0&page_size=2')).json().data;
    const second = (await root.get('/api/mj/?p=1&page_size=2')).json().data;
    expect(first.map((r: { mj_id: string }) => r.mj_id)).toEqual(['mj-bob-1', 'mj-ann-2']);
    expect(second.map((r: { mj_id: string }) => r.mj_id)).toEqual(['mj-ann-1']);
  });

  it('shows a user only their own drawing tasks, without the channel', async () => {
    const response = await ann.get(`/api/mj/self?p=0&channel_id=3`);
    expect(response.statusCode).toBe(200);
    const rows = response.json().data;
    expect(rows.map((r: { mj_id: string }) => r.mj_id)).toEqual(['mj-ann-2', 'mj-ann-1']);
    expect(rows.every((r: object) => !('channel_id' in r))).toBe(true);
    expect(response.body).not.toContain("bob's private prompt");
    const theirs = await ann.get('/api/mj/self?mj_id=mj-bob-1');
    expect(theirs.json().data).toEqual([]);
  });

  it('serves image links through the proxy when MjForwardUrlEnabled is on, else the upstream link', async () => {
    await root.put('/api/option/', { key: 'ServerAddress', value: 'https://gw.example.com' });
    await root.put('/api/option/', { key: 'MjForwardUrlEnabled', value: true });
    const proxied = (await ann.get('/api/mj/self?mj_id=mj-ann-1')).json().data[0];
    expect(proxied.image_url).toBe('https://gw.example.com/mj/image/mj-ann-1');
    await root.put('/api/option/', { key: 'MjForwardUrlEnabled', value: false });
    const direct = (await ann.get('/api/mj/self?mj_id=mj-ann-1')).json().data[0];
    expect(direct.image_url).toBe('https://cdn.upstream.example/ann-1.png');
    // A task without an image keeps an empty link either way.
    await root.put('/api/option/', { key: 'MjForwardUrlEnabled', value: true });
    expect((await ann.get('/api/mj/self?mj_id=mj-ann-2')).json().data[0].image_url).toBe('');
  });

  it('lists creative tasks for an admin with filters in seconds', async () => {
    const all = (await root.get('/api/task/?p=0')).json().data;
    expect(all.map((r: { task_id: string }) => r.task_id)).toEqual(['suno-bob-1', 'suno-ann-1']);
    expect(all[1]).toMatchObject({
      platform: 'suno',
      action: 'MUSIC',
      status: 'SUCCESS',
      submit_time: s0,
      finish_time: s0 + 90,
      channel_id: 7,
      properties: { input: 'a song about tea' },
      data: [{ audio_url: 'https://cdn.upstream.example/a.mp3' }],
    });
    const ids = async (query: string) =>
      (await root.get(`/api/task/?${query}`)).json().data.map((r: { task_id: string }) => r.task_id);
    expect(await ids('channel_id=8')).toEqual(['suno-bob-1']);
    expect(await ids('task_id=suno-ann-1')).toEqual(['suno-ann-1']);
    expect(await ids(`start_timestamp=${s0 + 1}`)).toEqual(['suno-bob-1']);
    expect(await ids(`end_timestamp=${s0}`)).toEqual(['suno-ann-1']);
    expect(await ids('p=1&page_size=1')).toEqual(['suno-ann-1']);
  });

  it('shows a user only their own creative tasks', async () => {
    const rows = (await bob.get('/api/task/self?p=0')).json().data;
    expect(rows.map((r: { task_id: string }) => r.task_id)).toEqual(['suno-bob-1']);
    expect(rows[0]).not.toHaveProperty('channel_id');
    expect((await bob.get('/api/task/self?task_id=suno-ann-1')).json().data).toEqual([]);
  });

  it('refuses bad filters with a clear message', async () => {
    const bad = await root.get('/api/mj/?start_timestamp=noon');
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({
      success: false,
      message: 'start_timestamp must be a Unix time in milliseconds',
    });
    const badTask = await ann.get('/api/task/self?end_timestamp=-5');
    expect(badTask.statusCode).toBe(400);
    expect(badTask.json().message).toBe('end_timestamp must be a Unix time in seconds');
    const badChannel = await root.get('/api/task/?channel_id=x');
    expect(badChannel.statusCode).toBe(400);
  });

  it("shows a video task's request and state, never the provider's file address or price internals", async () => {
    await t.runtime.deps.db.insert(tasks).values({
      userId: ann.userId!,
      taskId: 'video_00112233445566778899aabbccddeeff',
      platform: 'video',
      action: 'GENERATE',
      status: 'SUCCESS',
      progress: '100%',
      submitTime: s0 + 7200,
      finishTime: s0 + 7300,
      channelId: 9,
      quota: 1_000_000,
      properties: {
        upstream_id: 'text2video/kling-task-1',
        model: 'kling-v2-1',
        seconds: 10,
        size: '1280x720',
        per_second_quota: 100_000,
        prompt: 'a koi pond',
        remixed_from: null,
      },
      data: {
        id: 'text2video/kling-task-1',
        status: 'completed',
        progress: 100,
        seconds: 5,
        content_uri: 'https://cdn.provider.example/clip.mp4?signature=secret',
      },
    });
    const mine = (await ann.get('/api/task/self?task_id=video_00112233445566778899aabbccddeeff')).json().data;
    expect(mine).toHaveLength(1);
    expect(mine[0].properties).toEqual({
      model: 'kling-v2-1',
      seconds: 10,
      size: '1280x720',
      prompt: 'a koi pond',
      remixed_from: null,
    });
    expect(mine[0].data).toEqual({ status: 'completed', progress: 100, seconds: 5, size: null, error: null });
    const text = JSON.stringify(mine);
    for (const hidden of ['cdn.provider.example', 'kling-task-1', 'per_second_quota'])
      expect(text, hidden).not.toContain(hidden);
    // An administrator also gets the channel and the provider's job id (to ask the provider about it), still no file.
    const admin = (await root.get('/api/task/?task_id=video_00112233445566778899aabbccddeeff')).json()
      .data[0];
    expect(admin).toMatchObject({ channel_id: 9, properties: { upstream_id: 'text2video/kling-task-1' } });
    expect(JSON.stringify(admin)).not.toContain('cdn.provider.example');
  });

  it('keeps the admin lists from regular users and visitors', async () => {
    for (const url of ['/api/mj/', '/api/mj', '/api/task/', '/api/task']) {
      expect((await ann.get(url)).statusCode, url).toBe(403);
      expect((await t.app.inject({ method: 'GET', url })).statusCode, url).toBe(401);
    }
    for (const url of ['/api/mj/self', '/api/task/self']) {
      expect((await t.app.inject({ method: 'GET', url })).statusCode, url).toBe(401);
    }
  });
});
