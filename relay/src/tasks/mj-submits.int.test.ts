/**
 * The Midjourney submits beyond imagine, through the relay against a fake Midjourney-Proxy (Plus) speaking its wire
 * format: describe, blend, modal, shorten, upload-discord-images, and the Plus video and edits. Each is sent to the
 * right upstream path with the body the client sent, billed once at its `mj_*` price × the group ratio (one consume
 * log), stored with its action, and polled to success or to a failure refunded exactly once. Then the proxy's answer
 * codes (1, 21, 22 accepted; 23, 24, 4 refused; 30 and HTTP 429 answered 429) and the task metrics.
 */

import { logs, midjourneys, users } from '@turnpike/core/db/schema/index';
import { LogType } from '@turnpike/core/domain/logs';
import { FINISHED_TASK_STATUSES } from '@turnpike/core/domain/tasks';
import { and, eq, notInArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSample } from '../metrics/prometheus-text.ts';
import { type FakeMidjourney, startFakeMidjourney } from '../testing/fake-task-upstreams.ts';
import { createRelayTestApp, type RelayTestApp } from '../testing/relay-test-app.ts';
import { waitFor } from '../testing/wait.ts';
import { taskPollerOf } from './register.ts';

const QUOTA_PER_UNIT = 500_000;
const GROUP_RATIO = 1.5;
const START = 10_000_000;
/** Prices set as ModelPrice, each its own so a balance tells which action was billed. */
const PRICES = {
  mj_imagine: 0.2,
  mj_describe: 0.07,
  mj_blend: 0.12,
  mj_modal: 0.09,
  mj_shorten: 0.03,
  mj_upload: 0.04,
} as const;
/** Not set as ModelPrice: billed at the built-in prices (core/src/billing/default-ratios.ts). */
const BUILT_IN = { mj_video: 0.8, mj_edits: 0.1 } as const;
const quotaOf = (price: number, ratio = GROUP_RATIO) => Math.trunc(price * ratio * QUOTA_PER_UNIT);

let t: RelayTestApp;
/** The Plus proxy (channel type 5) of the default group. */
let plus: FakeMidjourney;
/** A plain Midjourney-Proxy (type 2) of the svip group. */
let plain: FakeMidjourney;
let plusChannelId: number;
let plainChannelId: number;

const db = () => t.runtime.deps.db;
const poll = (now?: number) => taskPollerOf(t.relay).runOnce(now === undefined ? {} : { now });

async function payer(group?: string) {
  const user = await t.seedUser({ quota: START, ...(group ? { group } : {}) });
  const token = await t.seedToken(user.id);
  return { user, key: `sk-${token.key}` };
}

async function quotaOfUser(id: number): Promise<number> {
  const [row] = await db().select({ quota: users.quota }).from(users).where(eq(users.id, id));
  return row?.quota ?? Number.NaN;
}

async function logsOf(userId: number, type: number) {
  return db()
    .select()
    .from(logs)
    .where(and(eq(logs.userId, userId), eq(logs.type, type)));
}

async function drawing(mjId: string) {
  const [row] = await db().select().from(midjourneys).where(eq(midjourneys.mjId, mjId));
  return row;
}

function submit(key: string, kind: string, body: Record<string, unknown>) {
  return t.relay.inject({
    method: 'POST',
    url: `/mj/submit/${kind}`,
    headers: { 'mj-api-secret': key },
    payload: body,
  });
}

/** Submits and expects acceptance: the task id. */
async function accepted(key: string, kind: string, body: Record<string, unknown>): Promise<string> {
  const response = await submit(key, kind, body);
  expect(response.statusCode, response.body).toBe(200);
  const answer = response.json() as { code: number; result: string };
  expect(answer.code, response.body).toBe(1);
  return answer.result;
}

/** The balance drops by exactly these charges, with one consume log each (model, quota), and nothing else. */
async function expectCharged(userId: number, charges: [model: string, quota: number][]) {
  const total = charges.reduce((sum, [, quota]) => sum + quota, 0);
  await waitFor(async () => ((await quotaOfUser(userId)) === START - total ? true : undefined));
  const consume = await waitFor(async () => {
    const rows = await logsOf(userId, LogType.Consume);
    return rows.length >= charges.length ? rows : undefined;
  });
  expect(consume.map((log) => [log.modelName, log.quota])).toEqual(charges);
}

const lastRequest = (fake: FakeMidjourney, path: string) =>
  fake.requests.filter((r) => r.path === path).at(-1);

const scrape = async () => (await t.relay.inject({ method: 'GET', url: '/metrics' })).body;
const sample = (text: string, name: string, labels: Record<string, string>) =>
  readSample(text, name, labels) ?? 0;

beforeAll(async () => {
  t = await createRelayTestApp();
  const { options } = t.runtime.deps;
  await options.set('ModelPrice', JSON.stringify(PRICES));
  await options.set('GroupRatio', JSON.stringify({ default: GROUP_RATIO, svip: 1 }));
  plus = await startFakeMidjourney('plus-secret');
  plain = await startFakeMidjourney('plain-secret', { firstId: 1_800_000_000_000 });
  plusChannelId = (
    await t.seedChannel({
      type: 5,
      key: 'plus-secret',
      baseUrl: plus.url,
      models: [...Object.keys(PRICES), ...Object.keys(BUILT_IN), 'mj_inpaint'].join(','),
    })
  ).id;
  plainChannelId = (
    await t.seedChannel({
      type: 2,
      key: 'plain-secret',
      baseUrl: plain.url,
      models: 'mj_video,mj_edits',
      group: 'svip',
    })
  ).id;
  await t.startRelay();
});

afterAll(async () => {
  await t?.close();
  await plus?.close();
  await plain?.close();
});

describe('Midjourney submits beyond imagine', () => {
  it('describe: sends the image on, bills mj_describe × group ratio once and polls the task to success', async () => {
    const { user, key } = await payer();
    const body = { base64: 'data:image/png;base64,iVBORw0KGgo=' };
    const mjId = await accepted(key, 'describe', body);

    const sent = lastRequest(plus, '/mj/submit/describe');
    expect(sent?.headers['mj-api-secret']).toBe('plus-secret');
    expect(sent?.body).toEqual(body);
    await expectCharged(user.id, [['mj_describe', quotaOf(PRICES.mj_describe)]]);
    expect(await drawing(mjId)).toMatchObject({
      action: 'DESCRIBE',
      status: 'SUBMITTED',
      channelId: plusChannelId,
      userId: user.id,
      quota: quotaOf(PRICES.mj_describe),
    });

    plus.succeed(mjId);
    await poll();
    const fetched = await t.relay.inject({
      method: 'GET',
      url: `/mj/task/${mjId}/fetch`,
      headers: { 'mj-api-secret': key },
    });
    expect(fetched.json()).toMatchObject({
      id: mjId,
      action: 'DESCRIBE',
      status: 'SUCCESS',
      progress: '100%',
    });
    expect(await logsOf(user.id, LogType.System)).toEqual([]);
    expect(await quotaOfUser(user.id)).toBe(START - quotaOf(PRICES.mj_describe));
  });

  it('blend: bills mj_blend, refunds it exactly once when it fails, and counts that refund once', async () => {
    const refunds = { provider: 'midjourney', reason: 'failure' };
    const before = await scrape();
    const { user, key } = await payer();
    const body = {
      base64Array: ['data:image/png;base64,AAAA', 'data:image/png;base64,BBBB'],
      dimensions: 'SQUARE',
    };
    const mjId = await accepted(key, 'blend', body);
    expect(lastRequest(plus, '/mj/submit/blend')?.body).toEqual(body);
    await expectCharged(user.id, [['mj_blend', quotaOf(PRICES.mj_blend)]]);
    expect(await drawing(mjId)).toMatchObject({ action: 'BLEND', quota: quotaOf(PRICES.mj_blend) });

    plus.fail(mjId, 'blend rejected by the bot');
    await poll();
    await poll();
    expect(await drawing(mjId)).toMatchObject({ status: 'FAILURE', failReason: 'blend rejected by the bot' });
    expect(await quotaOfUser(user.id)).toBe(START);
    const system = await logsOf(user.id, LogType.System);
    expect(system.map((log) => log.quota)).toEqual([quotaOf(PRICES.mj_blend)]);

    const after = await scrape();
    const delta = (name: string, labels: Record<string, string>) =>
      sample(after, name, labels) - sample(before, name, labels);
    expect(delta('turnpike_task_refunds_total', refunds)).toBe(1);
    expect(delta('turnpike_task_refunded_quota_total', { provider: 'midjourney' })).toBe(
      quotaOf(PRICES.mj_blend),
    );
    expect(
      delta('turnpike_task_polls_total', { provider: 'midjourney', outcome: 'updated' }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      delta('turnpike_task_submits_total', { provider: 'midjourney', action: 'BLEND', outcome: 'accepted' }),
    ).toBe(1);
    // Labels are closed sets: no user, token or key ever becomes one.
    expect(after).not.toContain(key.slice(3));
    expect(after).not.toMatch(/turnpike_task_[a-z_]+\{[^}]*(user|token|key)=/);
  });

  it('modal: a region button answers code 21 unbilled, the modal on it is billed mj_modal and polled to success', async () => {
    const { user, key } = await payer();
    const imagineId = await accepted(key, 'imagine', { prompt: 'a blue door' });
    plus.succeed(imagineId);
    await poll();

    const region = await submit(key, 'action', {
      customId: `MJ::Inpaint::1::${imagineId}::SOLO`,
      taskId: imagineId,
    });
    // Code 21 stays: it tells the client the drawing waits for its modal.
    expect(region.json()).toMatchObject({ code: 21 });
    const regionId = (region.json() as { result: string }).result;
    expect(await drawing(regionId)).toMatchObject({ action: 'INPAINT', quota: 0, status: 'SUBMITTED' });
    await poll();
    expect(await drawing(regionId)).toMatchObject({ status: 'MODAL' });

    const body = { taskId: regionId, prompt: 'a red door', maskBase64: 'data:image/png;base64,MASK' };
    const modalId = await accepted(key, 'modal', body);
    expect(lastRequest(plus, '/mj/submit/modal')?.body).toEqual(body);
    await expectCharged(user.id, [
      ['mj_imagine', quotaOf(PRICES.mj_imagine)],
      ['mj_modal', quotaOf(PRICES.mj_modal)],
    ]);
    expect(await drawing(modalId)).toMatchObject({
      action: 'MODAL',
      channelId: plusChannelId,
      quota: quotaOf(PRICES.mj_modal),
    });
    plus.succeed(modalId);
    await poll();
    expect(await drawing(modalId)).toMatchObject({ status: 'SUCCESS', progress: '100%' });
  });

  it('shorten: bills mj_shorten and refunds a failed shorten exactly once', async () => {
    const { user, key } = await payer();
    const body = { prompt: 'a very long prompt about a lighthouse, at dusk, in the style of a woodcut' };
    const mjId = await accepted(key, 'shorten', body);
    expect(lastRequest(plus, '/mj/submit/shorten')?.body).toEqual(body);
    await expectCharged(user.id, [['mj_shorten', quotaOf(PRICES.mj_shorten)]]);
    expect(await drawing(mjId)).toMatchObject({ action: 'SHORTEN', prompt: body.prompt });

    plus.progress(mjId, '50%');
    await poll();
    expect(await drawing(mjId)).toMatchObject({ status: 'IN_PROGRESS', progress: '50%' });
    plus.fail(mjId, 'shorten failed');
    await poll();
    await poll();
    expect(await drawing(mjId)).toMatchObject({ status: 'FAILURE', failReason: 'shorten failed' });
    expect(await quotaOfUser(user.id)).toBe(START);
    expect((await logsOf(user.id, LogType.System)).map((log) => log.quota)).toEqual([
      quotaOf(PRICES.mj_shorten),
    ]);
  });

  it('upload-discord-images: answers the uploaded URLs, bills mj_upload once and leaves nothing to poll', async () => {
    const { user, key } = await payer();
    const body = { base64Array: ['data:image/png;base64,AAAA', 'data:image/png;base64,BBBB'] };
    const response = await submit(key, 'upload-discord-images', body);
    expect(response.statusCode).toBe(200);
    const answer = response.json() as { code: number; result: string[] };
    expect(answer.code).toBe(1);
    expect(answer.result).toHaveLength(2);
    for (const url of answer.result) expect(url).toMatch(new RegExp(`^${plus.url}/attachments/.+\\.png$`));
    expect(lastRequest(plus, '/mj/submit/upload-discord-images')?.body).toEqual(body);
    await expectCharged(user.id, [['mj_upload', quotaOf(PRICES.mj_upload)]]);

    // The charge has its row in the drawing log, finished: the poller never asks about it, nothing refunds it.
    const rows = await db().select().from(midjourneys).where(eq(midjourneys.userId, user.id));
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      action: 'UPLOAD',
      status: 'SUCCESS',
      progress: '100%',
      mjId: '',
      quota: quotaOf(PRICES.mj_upload),
    });
    expect(JSON.parse(rows[0]?.properties ?? '{}')).toEqual({ urls: answer.result });
    const asked = plus.requests.length;
    await poll();
    const polledIds = plus.requests
      .slice(asked)
      .filter((r) => r.path === '/mj/task/list-by-condition')
      .flatMap((r) => (r.body as { ids: string[] }).ids);
    expect(polledIds).not.toContain('');
    expect(await db().select().from(midjourneys).where(eq(midjourneys.userId, user.id))).toMatchObject([
      { status: 'SUCCESS' },
    ]);
    expect(await logsOf(user.id, LogType.System)).toEqual([]);
    expect(await quotaOfUser(user.id)).toBe(START - quotaOf(PRICES.mj_upload));

    // A refused upload costs nothing and stores nothing.
    plus.refuseNext(200, { code: 4, description: 'no image could be uploaded' });
    const refused = await submit(key, 'upload-discord-images', body);
    expect(refused.statusCode).toBe(200);
    expect(refused.json()).toMatchObject({ code: 4, description: 'no image could be uploaded' });
    expect(await db().select().from(midjourneys).where(eq(midjourneys.userId, user.id))).toHaveLength(1);
    expect(await quotaOfUser(user.id)).toBe(START - quotaOf(PRICES.mj_upload));
  });
});

describe('Midjourney-Proxy Plus video and edits', () => {
  it("video: a video of a finished drawing goes to its channel, is billed mj_video and shows its video's URLs", async () => {
    const { user, key } = await payer();
    const imagineId = await accepted(key, 'imagine', { prompt: 'waves on a pier' });

    // The drawing has not finished: no video of it yet (MjActionCheckSuccessEnabled), and nothing is charged.
    const early = await submit(key, 'video', { taskId: imagineId, index: 1, motion: 'low' });
    expect(early.statusCode).toBe(400);
    expect(early.json()).toMatchObject({ code: 4 });

    plus.succeed(imagineId);
    await poll();
    const body = { taskId: imagineId, index: 1, motion: 'high', prompt: 'the waves roll in' };
    const videoId = await accepted(key, 'video', body);
    const sent = lastRequest(plus, '/mj/submit/video');
    expect(sent?.body).toEqual(body);
    expect(sent?.headers['mj-api-secret']).toBe('plus-secret');
    await expectCharged(user.id, [
      ['mj_imagine', quotaOf(PRICES.mj_imagine)],
      ['mj_video', quotaOf(BUILT_IN.mj_video)],
    ]);
    expect(await drawing(videoId)).toMatchObject({ action: 'VIDEO', channelId: plusChannelId });

    plus.succeed(videoId);
    await poll();
    const fetched = await t.relay.inject({
      method: 'GET',
      url: `/mj/task/${videoId}/fetch`,
      headers: { 'mj-api-secret': key },
    });
    const task = fetched.json() as {
      status: string;
      videoUrl: string;
      videoUrls: { url: string }[];
      properties: Record<string, unknown>;
    };
    expect(task.status).toBe('SUCCESS');
    expect(task.videoUrl).toBe(`${plus.url}/videos/${videoId}.mp4`);
    expect(task.videoUrls).toEqual([{ url: `${plus.url}/videos/${videoId}.mp4` }]);
    expect(task.properties).not.toHaveProperty('videoUrl');
  });

  it('edits: bills mj_edits at the built-in price and refunds a failed edit exactly once', async () => {
    const { user, key } = await payer();
    const body = { prompt: 'make the sky purple', image: 'https://images.example/sky.png' };
    const mjId = await accepted(key, 'edits', body);
    expect(lastRequest(plus, '/mj/submit/edits')?.body).toEqual(body);
    await expectCharged(user.id, [['mj_edits', quotaOf(BUILT_IN.mj_edits)]]);
    expect(await drawing(mjId)).toMatchObject({ action: 'EDITS', prompt: body.prompt });
    plus.fail(mjId, 'edit failed');
    await poll();
    await poll();
    expect(await drawing(mjId)).toMatchObject({ status: 'FAILURE' });
    expect(await quotaOfUser(user.id)).toBe(START);
    expect((await logsOf(user.id, LogType.System)).map((log) => log.quota)).toEqual([
      quotaOf(BUILT_IN.mj_edits),
    ]);
  });

  it('serves video and edits under the mode prefixes, passed on to the proxy', async () => {
    const { user, key } = await payer();
    for (const [mode, kind] of [
      ['mj-relax', 'video'],
      ['mj-fast', 'edits'],
    ] as const) {
      const response = await t.relay.inject({
        method: 'POST',
        url: `/${mode}/mj/submit/${kind}`,
        headers: { 'mj-api-secret': key },
        payload: { prompt: `a ${kind} in ${mode}`, image: 'https://images.example/x.png' },
      });
      expect(response.json(), response.body).toMatchObject({ code: 1 });
      expect(lastRequest(plus, `/${mode}/mj/submit/${kind}`)?.body).toEqual({
        prompt: `a ${kind} in ${mode}`,
        image: 'https://images.example/x.png',
      });
    }
    await expectCharged(user.id, [
      ['mj_video', quotaOf(BUILT_IN.mj_video)],
      ['mj_edits', quotaOf(BUILT_IN.mj_edits)],
    ]);
  });

  it('passes video and edits through a plain Midjourney-Proxy channel (type 2) that lists them', async () => {
    const { user, key } = await payer('svip');
    const video = { prompt: 'a kite in the wind', image: 'https://images.example/kite.png', motion: 'low' };
    const videoId = await accepted(key, 'video', video);
    const editsId = await accepted(key, 'edits', { prompt: 'add a second kite', image: video.image });
    expect(lastRequest(plain, '/mj/submit/video')?.body).toEqual(video);
    expect(lastRequest(plain, '/mj/submit/edits')).toBeDefined();
    expect(await drawing(videoId)).toMatchObject({ action: 'VIDEO', channelId: plainChannelId });
    expect(await drawing(editsId)).toMatchObject({ action: 'EDITS', channelId: plainChannelId });
    await expectCharged(user.id, [
      ['mj_video', quotaOf(BUILT_IN.mj_video, 1)],
      ['mj_edits', quotaOf(BUILT_IN.mj_edits, 1)],
    ]);
  });
});

describe('Midjourney-Proxy answer codes', () => {
  it('tells clients 1 for codes 21 and 22 and bills them; an existing finished task is stored finished', async () => {
    const { user, key } = await payer();
    plus.refuseNext(200, {
      code: 21,
      description: 'task exists',
      result: 'existing-task-1',
      properties: { status: 'SUCCESS', imageUrl: 'https://cdn.example/existing.png' },
    });
    const exists = await submit(key, 'describe', { base64: 'data:image/png;base64,AAAA' });
    expect(exists.statusCode).toBe(200);
    expect(exists.json()).toMatchObject({ code: 1, result: 'existing-task-1' });
    plus.refuseNext(200, {
      code: 22,
      description: 'queued, 1 ahead',
      result: 'queued-task-1',
      properties: { numberOfQueues: 1 },
    });
    const queued = await submit(key, 'blend', { base64Array: ['a', 'b'] });
    expect(queued.json()).toMatchObject({ code: 1, result: 'queued-task-1' });
    await expectCharged(user.id, [
      ['mj_describe', quotaOf(PRICES.mj_describe)],
      ['mj_blend', quotaOf(PRICES.mj_blend)],
    ]);
    expect(await drawing('existing-task-1')).toMatchObject({
      status: 'SUCCESS',
      progress: '100%',
      imageUrl: 'https://cdn.example/existing.png',
      code: 1,
    });
    expect(await drawing('queued-task-1')).toMatchObject({ status: 'SUBMITTED', code: 1 });
  });

  it('passes refusals 23, 24 and 4 on as the proxy answered them, unbilled and unstored', async () => {
    const { user, key } = await payer();
    const cases = [
      {
        status: 200,
        body: { code: 23, description: 'queue full', result: '14001929738841620' },
        expected: 200,
      },
      {
        status: 200,
        body: { code: 24, description: 'banned prompt', properties: { bannedWord: 'x' } },
        expected: 200,
      },
      { status: 400, body: { code: 4, description: 'base64 is invalid' }, expected: 400 },
    ];
    for (const refusal of cases) {
      plus.refuseNext(refusal.status, refusal.body);
      const response = await submit(key, 'describe', { base64: 'data:image/png;base64,AAAA' });
      expect(response.statusCode, JSON.stringify(refusal.body)).toBe(refusal.expected);
      expect(response.json()).toEqual(refusal.body);
    }
    expect(await db().select().from(midjourneys).where(eq(midjourneys.userId, user.id))).toEqual([]);
    expect(await quotaOfUser(user.id)).toBe(START);
    expect(await logsOf(user.id, LogType.Consume)).toEqual([]);
  });

  it('answers code 30 and an upstream 429 with HTTP 429 and code 30, and charges nothing', async () => {
    const { user, key } = await payer();
    plus.refuseNext(200, { code: 30, description: 'group load saturated' });
    const saturated = await submit(key, 'shorten', { prompt: 'x' });
    expect(saturated.statusCode).toBe(429);
    expect(saturated.json()).toEqual({
      code: 30,
      description: 'group load saturated',
      type: 'upstream_error',
    });
    plus.refuseNext(429, { code: 23, description: 'too many requests' });
    const limited = await submit(key, 'shorten', { prompt: 'x' });
    expect(limited.statusCode).toBe(429);
    expect(limited.json()).toMatchObject({ code: 30, type: 'upstream_error' });
    expect(await quotaOfUser(user.id)).toBe(START);
    expect(await db().select().from(midjourneys).where(eq(midjourneys.userId, user.id))).toEqual([]);
  });

  it('takes an accepting code without a task id for an upstream error, not a charge', async () => {
    const { user, key } = await payer();
    plus.refuseNext(200, { code: 1, description: 'submitted' });
    const response = await submit(key, 'describe', { base64: 'data:image/png;base64,AAAA' });
    expect(response.statusCode).toBe(502);
    expect(response.json()).toMatchObject({ type: 'upstream_error' });
    expect(await quotaOfUser(user.id)).toBe(START);
  });
});

describe('task metrics', () => {
  it('counts submits by outcome, a time-out refund as a timeout, and the unfinished tasks of the last pass', async () => {
    const before = await scrape();
    const { user, key } = await payer();
    const mjId = await accepted(key, 'shorten', { prompt: 'a tern over the sea' });
    plus.refuseNext(200, { code: 24, description: 'banned prompt' });
    await submit(key, 'shorten', { prompt: 'banned' });
    await expectCharged(user.id, [['mj_shorten', quotaOf(PRICES.mj_shorten)]]);

    const unfinished = await db()
      .select({ id: midjourneys.id })
      .from(midjourneys)
      .where(notInArray(midjourneys.status, [...FINISHED_TASK_STATUSES]));
    const outcome = await poll(Date.now() + 61 * 60_000);
    expect(outcome.leader).toBe(true);
    expect(await drawing(mjId)).toMatchObject({ status: 'FAILURE' });
    expect(await quotaOfUser(user.id)).toBe(START);

    const after = await scrape();
    const delta = (name: string, labels: Record<string, string>) =>
      sample(after, name, labels) - sample(before, name, labels);
    const shorten = (outcomeLabel: string) =>
      delta('turnpike_task_submits_total', {
        provider: 'midjourney',
        action: 'SHORTEN',
        outcome: outcomeLabel,
      });
    expect([shorten('accepted'), shorten('refused')]).toEqual([1, 1]);
    // Every task past the time-out was refunded by this pass, each counted once as a timeout.
    expect(delta('turnpike_task_refunds_total', { provider: 'midjourney', reason: 'timeout' })).toBe(
      outcome.report.refunded,
    );
    expect(outcome.report.refunded).toBeGreaterThanOrEqual(1);
    expect(sample(after, 'turnpike_tasks_unfinished', { provider: 'midjourney' })).toBe(unfinished.length);
  });
});
