/**
 * The whole life of Midjourney and Suno tasks through the relay against fake upstreams speaking their wire formats:
 * submit (billed at the per-call price × group ratio once accepted), poll (progress, success, the image proxied),
 * failure and time-out (refunded exactly once), the proxy's callback, and two relay processes polling at once.
 */

import { logs, midjourneys, tasks, tokens, users } from '@turnpike/core/db/schema/index';
import { LogType } from '@turnpike/core/domain/logs';
import { createTestRuntime as createTestApp } from '@turnpike/core/testing/test-runtime';
import { and, eq } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildRelayApp } from '../app.ts';
import { readSample } from '../metrics/prometheus-text.ts';
import {
  FAKE_PNG,
  type FakeMidjourney,
  type FakeSuno,
  startFakeMidjourney,
  startFakeSuno,
} from '../testing/fake-task-upstreams.ts';
import { createRelayTestApp, injectThroughServer, type RelayTestApp } from '../testing/relay-test-app.ts';
import { waitFor } from '../testing/wait.ts';
import { failAndRefund } from './finish.ts';
import { createDatabaseLease, createRedisLease } from './lease.ts';
import { taskPollerOf } from './register.ts';

const QUOTA_PER_UNIT = 500_000;
const GROUP_RATIO = 1.5;
const IMAGINE_PRICE = 0.2;
const UPSCALE_PRICE = 0.1;
const MUSIC_PRICE = 0.1;
const LYRICS_PRICE = 0.02;
const quotaOf = (price: number) => Math.trunc(price * GROUP_RATIO * QUOTA_PER_UNIT);
const SERVER_ADDRESS = 'https://gw.example.test';

let t: RelayTestApp;
let mj: FakeMidjourney;
let suno: FakeSuno;
let mjChannelId: number;

const db = () => t.runtime.deps.db;

async function payer(fields: { remainQuota?: number } = {}) {
  const user = await t.seedUser({ quota: 1_000_000 });
  const token = await t.seedToken(
    user.id,
    fields.remainQuota === undefined ? {} : { unlimitedQuota: false, remainQuota: fields.remainQuota },
  );
  return { user, token, key: `sk-${token.key}` };
}

async function quotaOfUser(id: number): Promise<number> {
  const [row] = await db().select({ quota: users.quota }).from(users).where(eq(users.id, id));
  return row?.quota ?? Number.NaN;
}

async function drawing(mjId: string) {
  const [row] = await db().select().from(midjourneys).where(eq(midjourneys.mjId, mjId));
  return row;
}

function imagine(
  key: string,
  body: Record<string, unknown> = { prompt: 'a lighthouse at dusk' },
  path = '/mj',
) {
  return t.relay.inject({
    method: 'POST',
    url: `${path}/submit/imagine`,
    headers: { 'mj-api-secret': key },
    payload: body,
  });
}

async function submitImagine(key: string): Promise<string> {
  const response = await imagine(key);
  expect(response.statusCode).toBe(200);
  const answer = response.json() as { code: number; result: string };
  expect(answer.code).toBe(1);
  return answer.result;
}

const poll = (now?: number) => taskPollerOf(t.relay).runOnce(now === undefined ? {} : { now });

beforeAll(async () => {
  t = await createRelayTestApp();
  const { options } = t.runtime.deps;
  await options.set(
    'ModelPrice',
    JSON.stringify({
      mj_imagine: IMAGINE_PRICE,
      mj_upscale: UPSCALE_PRICE,
      suno_music: MUSIC_PRICE,
      suno_lyrics: LYRICS_PRICE,
    }),
  );
  await options.set('GroupRatio', JSON.stringify({ default: GROUP_RATIO, vip: 1, svip: 1 }));
  await options.set('ServerAddress', SERVER_ADDRESS);
  mj = await startFakeMidjourney('mj-upstream-secret');
  suno = await startFakeSuno('suno-upstream-key');
  mjChannelId = (
    await t.seedChannel({
      type: 2,
      key: 'mj-upstream-secret',
      baseUrl: mj.url,
      models: 'mj_imagine,mj_upscale,mj_variation,mj_reroll,mj_describe,mj_blend,swap_face',
    })
  ).id;
  await t.seedChannel({
    type: 36,
    key: 'suno-upstream-key',
    baseUrl: suno.url,
    models: 'suno_music,suno_lyrics',
  });
  await t.startRelay();
});

afterAll(async () => {
  await t?.close();
  await mj?.close();
  await suno?.close();
});

describe('Midjourney drawings', () => {
  it('submits, bills the price × group ratio once, polls progress and success and proxies the image', async () => {
    const { user, key } = await payer();
    const mjId = await submitImagine(key);

    const sent = mj.requests.find((r) => r.path === '/mj/submit/imagine');
    expect(sent?.headers['mj-api-secret']).toBe('mj-upstream-secret');
    expect(sent?.body).toEqual({ prompt: 'a lighthouse at dusk' });
    await waitFor(async () =>
      (await quotaOfUser(user.id)) === 1_000_000 - quotaOf(IMAGINE_PRICE) ? true : undefined,
    );
    const consume = await db()
      .select()
      .from(logs)
      .where(and(eq(logs.userId, user.id), eq(logs.type, LogType.Consume)));
    expect(consume.map((log) => [log.modelName, log.quota])).toEqual([
      ['mj_imagine', quotaOf(IMAGINE_PRICE)],
    ]);
    expect(JSON.parse(consume[0]?.other ?? '{}')).toEqual({
      model_price: IMAGINE_PRICE,
      group_ratio: GROUP_RATIO,
    });

    const fetched = await t.relay.inject({
      method: 'GET',
      url: `/mj/task/${mjId}/fetch`,
      headers: { 'mj-api-secret': key },
    });
    expect(fetched.json()).toMatchObject({
      id: mjId,
      action: 'IMAGINE',
      status: 'SUBMITTED',
      progress: '0%',
    });

    mj.progress(mjId, '45%');
    expect((await poll()).report.updated).toBeGreaterThanOrEqual(1);
    expect(await drawing(mjId)).toMatchObject({ status: 'IN_PROGRESS', progress: '45%' });

    mj.succeed(mjId);
    await poll();
    const done = await drawing(mjId);
    expect(done).toMatchObject({ status: 'SUCCESS', progress: '100%', quota: quotaOf(IMAGINE_PRICE) });
    expect(done?.finishTime).toBeGreaterThan(0);

    const shown = await t.relay.inject({
      method: 'POST',
      url: '/mj/task/list-by-condition',
      headers: { authorization: `Bearer ${key}` },
      payload: { ids: [mjId] },
    });
    const [task] = shown.json() as { imageUrl: string; buttons: unknown[] }[];
    expect(task?.imageUrl).toBe(`${SERVER_ADDRESS}/mj/image/${mjId}`);
    expect(task?.buttons).toHaveLength(1);

    const image = await t.relay.inject({ method: 'GET', url: `/mj/image/${mjId}` });
    expect(image.statusCode).toBe(200);
    expect(image.headers['content-type']).toBe('image/png');
    expect(image.rawPayload.equals(FAKE_PNG)).toBe(true);

    const seed = await t.relay.inject({
      method: 'GET',
      url: `/mj/task/${mjId}/image-seed`,
      headers: { 'mj-api-secret': key },
    });
    expect(seed.json()).toEqual({ code: 1, description: 'success', result: `seed-${mjId}` });

    // An upscale of the finished drawing goes to its channel and is billed at its own price.
    const upscale = await t.relay.inject({
      method: 'POST',
      url: '/mj/submit/simple-change',
      headers: { authorization: 'Bearer midjourney-proxy', 'mj-api-secret': key },
      payload: { content: `${mjId} U1` },
    });
    expect(upscale.json()).toMatchObject({ code: 1 });
    await waitFor(async () =>
      (await quotaOfUser(user.id)) === 1_000_000 - quotaOf(IMAGINE_PRICE) - quotaOf(UPSCALE_PRICE)
        ? true
        : undefined,
    );
    const upscaled = await drawing((upscale.json() as { result: string }).result);
    expect(upscaled).toMatchObject({ action: 'UPSCALE', channelId: mjChannelId, status: 'SUBMITTED' });
  });

  it('counts accepted and refused submits in the relay metrics with the quota they spent', async () => {
    const { key } = await payer();
    await submitImagine(key);
    mj.refuseNext(200, { code: 23, description: 'queue full' });
    await imagine(key);
    const metrics = (await t.relay.inject({ method: 'GET', url: '/metrics' })).body;
    const calls = (status: number) =>
      new RegExp(
        `turnpike_relay_calls_total\\{route="/mj/submit/imagine",model="mj_imagine",channel="${mjChannelId}",status="${status}",stream="false"\\} (\\d+)`,
      ).exec(metrics)?.[1];
    // The refusal (code 23) reached the client as a 200 too, and is counted with no quota.
    expect(Number(calls(200))).toBeGreaterThanOrEqual(2);
    expect(metrics).toMatch(/turnpike_relay_quota_spent_total\{model="mj_imagine"\} [1-9]/);
  });

  it('refunds a drawing that fails upstream exactly once, to the user and the limited token', async () => {
    const { user, token, key } = await payer({ remainQuota: 400_000 });
    const mjId = await submitImagine(key);
    await waitFor(async () => ((await quotaOfUser(user.id)) < 1_000_000 ? true : undefined));
    mj.fail(mjId, 'banned prompt detected by the bot');
    await poll();
    await poll();
    expect(await drawing(mjId)).toMatchObject({
      status: 'FAILURE',
      failReason: 'banned prompt detected by the bot',
    });
    expect(await quotaOfUser(user.id)).toBe(1_000_000);
    const [tokenRow] = await db().select().from(tokens).where(eq(tokens.id, token.id));
    expect(tokenRow?.remainQuota).toBe(400_000);
    const refunds = await db()
      .select()
      .from(logs)
      .where(and(eq(logs.userId, user.id), eq(logs.type, LogType.System)));
    expect(refunds.map((log) => log.quota)).toEqual([quotaOf(IMAGINE_PRICE)]);
    // The ledger reads the balance again: the refunded user can spend it at once.
    expect((await imagine(key)).json()).toMatchObject({ code: 1 });
  });

  it('lets a balance of exactly one drawing draw again once its failed drawing is refunded', async () => {
    const user = await t.seedUser({ quota: quotaOf(IMAGINE_PRICE) });
    const token = await t.seedToken(user.id);
    const key = `sk-${token.key}`;
    const first = await submitImagine(key);
    await waitFor(async () => ((await quotaOfUser(user.id)) === 0 ? true : undefined));
    expect((await imagine(key)).statusCode).toBe(403);
    mj.fail(first, 'upstream crashed');
    await poll();
    expect(await quotaOfUser(user.id)).toBe(quotaOf(IMAGINE_PRICE));
    // The ledger reads the refunded balance again: the next drawing is admitted, and the one after is not.
    await waitFor(async () => ((await imagine(key)).statusCode === 200 ? true : undefined));
    expect((await imagine(key)).statusCode).toBe(403);
  });

  it('fails and refunds a drawing the upstream has not finished within an hour', async () => {
    const { user, key } = await payer();
    const mjId = await submitImagine(key);
    await waitFor(async () => ((await quotaOfUser(user.id)) < 1_000_000 ? true : undefined));
    const outcome = await poll(Date.now() + 61 * 60_000);
    expect(outcome.report.refunded).toBeGreaterThanOrEqual(1);
    const row = await drawing(mjId);
    expect(row?.status).toBe('FAILURE');
    expect(row?.failReason).toMatch(/timed out/);
    expect(await quotaOfUser(user.id)).toBe(1_000_000);
  });

  it('does not bill a submit the proxy refuses, and stores no task', async () => {
    const { user, key } = await payer();
    mj.refuseNext(200, { code: 24, description: 'banned prompt', result: '' });
    const response = await imagine(key);
    expect(response.json()).toMatchObject({ code: 24, description: 'banned prompt' });
    const rows = await db().select().from(midjourneys).where(eq(midjourneys.userId, user.id));
    expect(rows).toEqual([]);
    expect(await quotaOfUser(user.id)).toBe(1_000_000);
  });

  it('refuses without a key, and an action on a drawing that has not succeeded', async () => {
    expect(
      (await t.relay.inject({ method: 'POST', url: '/mj/submit/imagine', payload: { prompt: 'x' } }))
        .statusCode,
    ).toBe(401);
    const { key } = await payer();
    const mjId = await submitImagine(key);
    const change = await t.relay.inject({
      method: 'POST',
      url: '/mj/submit/change',
      headers: { 'mj-api-secret': key },
      payload: { action: 'UPSCALE', index: 1, taskId: mjId },
    });
    expect(change.statusCode).toBe(400);
    expect(change.json()).toMatchObject({ code: 4 });
  });

  it('keeps a prompt with a NUL character (without it) and answers ids with one as not found', async () => {
    const { key } = await payer();
    const response = await imagine(key, { prompt: 'a cat\u0000 on a wall' });
    expect(response.json()).toMatchObject({ code: 1 });
    expect((await drawing((response.json() as { result: string }).result))?.prompt).toBe('a cat on a wall');
    for (const url of ['/mj/task/a%00b/fetch', '/mj/image/a%00b', '/suno/fetch/a%00b']) {
      const answer = await t.relay.inject({
        method: 'GET',
        url,
        headers: { authorization: `Bearer ${key}` },
      });
      expect(answer.statusCode, url).toBe(404);
    }
  });

  it("bills a face swap as swap_face and sends it to the proxy's insight-face route", async () => {
    const { user, key } = await payer();
    const response = await t.relay.inject({
      method: 'POST',
      url: '/mj/insight-face/swap',
      headers: { 'mj-api-secret': key },
      payload: { sourceBase64: 'data:image/png;base64,AAAA', targetBase64: 'data:image/png;base64,BBBB' },
    });
    expect(response.json(), response.body).toMatchObject({ code: 1 });
    expect(mj.requests.at(-1)?.path).toBe('/mj/insight-face/swap');
    expect(await drawing((response.json() as { result: string }).result)).toMatchObject({
      action: 'SWAP_FACE',
    });
    await waitFor(async () =>
      (await quotaOfUser(user.id)) === 1_000_000 - quotaOf(0.05) ? true : undefined,
    );
  });

  it("serves a Plus button action on the drawing's channel, billed as the action it stands for", async () => {
    const { user, key } = await payer();
    const mjId = await submitImagine(key);
    mj.succeed(mjId);
    await poll();
    await waitFor(async () => ((await quotaOfUser(user.id)) < 1_000_000 ? true : undefined));
    const before = await quotaOfUser(user.id);
    const response = await t.relay.inject({
      method: 'POST',
      url: '/mj/submit/action',
      headers: { 'mj-api-secret': key },
      payload: { customId: `MJ::JOB::upsample::1::${mjId}`, taskId: mjId },
    });
    expect(response.json()).toMatchObject({ code: 1 });
    expect(mj.requests.at(-1)).toMatchObject({ path: '/mj/submit/action' });
    expect(await drawing((response.json() as { result: string }).result)).toMatchObject({
      action: 'UPSCALE',
      channelId: mjChannelId,
    });
    await waitFor(async () =>
      (await quotaOfUser(user.id)) === before - quotaOf(UPSCALE_PRICE) ? true : undefined,
    );
  });

  it('forwards accountFilter only with MjAccountFilterEnabled', async () => {
    await t.runtime.deps.options.set('MjAccountFilterEnabled', 'true');
    try {
      const { key } = await payer();
      await imagine(key, { prompt: 'a heron', accountFilter: { instanceId: 'acc-1' } });
      expect(mj.requests.at(-1)?.body).toEqual({ prompt: 'a heron', accountFilter: { instanceId: 'acc-1' } });
    } finally {
      await t.runtime.deps.options.set('MjAccountFilterEnabled', 'false');
    }
  });

  it('releases the hold when the upstream cannot be reached, so the balance is whole for the next submit', async () => {
    // A user whose whole balance is one drawing, served by a channel of their group that does not answer.
    const user = await t.seedUser({ quota: quotaOf(IMAGINE_PRICE) / GROUP_RATIO, group: 'svip' });
    const token = await t.seedToken(user.id);
    const dead = await t.seedChannel({
      type: 2,
      key: 'k',
      baseUrl: 'http://127.0.0.1:9',
      models: 'mj_imagine',
      group: 'svip',
    });
    await t.runtime.deps.bus.publish({ type: 'channels.changed', ids: [dead.id] });
    for (let attempt = 0; attempt < 2; attempt++) {
      const response = await imagine(`sk-${token.key}`);
      expect(response.statusCode, response.body).toBe(502);
    }
    expect(await quotaOfUser(user.id)).toBe(quotaOf(IMAGINE_PRICE) / GROUP_RATIO);
    expect(await db().select().from(midjourneys).where(eq(midjourneys.userId, user.id))).toEqual([]);
  });

  it('refuses a task model the token is not allowed to use', async () => {
    const user = await t.seedUser({ quota: 1_000_000 });
    const token = await t.seedToken(user.id, {
      modelLimitsEnabled: true,
      modelLimits: 'gpt-4o-mini,suno_lyrics',
    });
    const refused = await imagine(`sk-${token.key}`);
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ code: 403 });
    const music = await t.relay.inject({
      method: 'POST',
      url: '/suno/submit/music',
      headers: { authorization: `Bearer sk-${token.key}` },
      payload: { prompt: 'no' },
    });
    expect(music.statusCode).toBe(403);
    expect(music.json()).toMatchObject({ code: 'model_not_allowed', data: null });
    expect(await quotaOfUser(user.id)).toBe(1_000_000);
  });

  it('passes the mode prefix on, clears mode flags and strips the notify hook as the switches say', async () => {
    await t.runtime.deps.options.set('MjModeClearEnabled', 'true');
    try {
      const { key } = await payer();
      const response = await imagine(
        key,
        {
          prompt: 'a fox --fast',
          notifyHook: 'https://client.example/hook',
          accountFilter: { channelId: 'x' },
        },
        '/mj-fast/mj',
      );
      expect(response.json()).toMatchObject({ code: 1 });
      const sent = mj.requests.filter((r) => r.path === '/mj-fast/mj/submit/imagine').at(-1);
      expect(sent?.body).toEqual({ prompt: 'a fox' });
    } finally {
      await t.runtime.deps.options.set('MjModeClearEnabled', 'false');
    }
  });

  it('applies the proxy callback from what the proxy reports, not from the callback body', async () => {
    const { user, key } = await payer();
    const mjId = await submitImagine(key);
    const notify = (body: Record<string, unknown>) =>
      t.relay.inject({ method: 'POST', url: '/mj/notify', payload: body });
    expect((await notify({ id: mjId, status: 'SUCCESS' })).statusCode).toBe(403);
    await t.runtime.deps.options.set('MjNotifyEnabled', 'true');
    try {
      mj.progress(mjId, '80%');
      // A forged failure: the proxy still says 80 %, so nothing fails and nothing is refunded.
      expect((await notify({ id: mjId, status: 'FAILURE', failReason: 'forged' })).statusCode).toBe(200);
      expect(await drawing(mjId)).toMatchObject({ status: 'IN_PROGRESS', progress: '80%' });
      mj.succeed(mjId);
      await notify({ id: mjId, status: 'SUCCESS' });
      expect(await drawing(mjId)).toMatchObject({ status: 'SUCCESS', progress: '100%' });
      await waitFor(async () =>
        (await quotaOfUser(user.id)) === 1_000_000 - quotaOf(IMAGINE_PRICE) ? true : undefined,
      );
    } finally {
      await t.runtime.deps.options.set('MjNotifyEnabled', 'false');
    }
  });
});

describe('Suno tasks', () => {
  const submit = (key: string, action: 'music' | 'lyrics', body: Record<string, unknown>) =>
    t.relay.inject({
      method: 'POST',
      url: `/suno/submit/${action}`,
      headers: { authorization: `Bearer ${key}` },
      payload: body,
    });

  it('submits music, bills suno_music, polls it to success and answers the fetch routes', async () => {
    const { user, key } = await payer();
    const response = await submit(key, 'music', { prompt: 'a song about toll roads', mv: 'chirp-v3-5' });
    expect(response.statusCode).toBe(200);
    const { code, data: taskId } = response.json() as { code: string; data: string };
    expect(code).toBe('success');
    const sent = suno.requests.find((r) => r.path === '/suno/submit/music');
    expect(sent?.headers.authorization).toBe('Bearer suno-upstream-key');
    await waitFor(async () =>
      (await quotaOfUser(user.id)) === 1_000_000 - quotaOf(MUSIC_PRICE) ? true : undefined,
    );

    suno.progress(taskId, '30%');
    await poll();
    const one = await t.relay.inject({
      method: 'GET',
      url: `/suno/fetch/${taskId}`,
      headers: { authorization: `Bearer ${key}` },
    });
    expect(one.json()).toMatchObject({
      code: 'success',
      data: { task_id: taskId, status: 'IN_PROGRESS', progress: '30%' },
    });

    suno.succeed(taskId);
    await poll();
    const many = await t.relay.inject({
      method: 'POST',
      url: '/suno/fetch',
      headers: { authorization: `Bearer ${key}` },
      payload: { ids: [taskId] },
    });
    const [task] = (many.json() as { data: { status: string; data: { audio_url: string }[] }[] }).data;
    expect(task?.status).toBe('SUCCESS');
    expect(task?.data[0]?.audio_url).toContain(taskId);
  });

  it('retries a busy Suno channel on the next one (RetryTimes) and bills the task once', async () => {
    const busy = await startFakeSuno('busy-key');
    await t.runtime.deps.options.set('RetryTimes', '1');
    try {
      const first = await t.seedChannel({
        type: 36,
        key: 'busy-key',
        baseUrl: busy.url,
        models: 'suno_music',
        group: 'vip',
        priority: 10,
      });
      const second = await t.seedChannel({
        type: 36,
        key: 'suno-upstream-key',
        baseUrl: suno.url,
        models: 'suno_music',
        group: 'vip',
      });
      await t.runtime.deps.bus.publish({ type: 'channels.changed', ids: [first.id, second.id] });
      const user = await t.seedUser({ quota: 1_000_000, group: 'vip' });
      const token = await t.seedToken(user.id);
      busy.refuseNext(503, { code: 'busy', message: 'upstream overloaded', data: null });
      const response = await submit(`sk-${token.key}`, 'music', { prompt: 'a second try' });
      expect(response.json()).toMatchObject({ code: 'success' });
      expect(busy.requests.filter((r) => r.path === '/suno/submit/music')).toHaveLength(1);
      const [row] = await db().select().from(tasks).where(eq(tasks.userId, user.id));
      expect(row).toMatchObject({ channelId: second.id, quota: Math.trunc(MUSIC_PRICE * 500_000) });
      await waitFor(async () =>
        (await quotaOfUser(user.id)) === 1_000_000 - Math.trunc(MUSIC_PRICE * 500_000) ? true : undefined,
      );
    } finally {
      await t.runtime.deps.options.set('RetryTimes', '0');
      await busy.close();
    }
  });

  it("refuses unreadable JSON in each API's own error shape", async () => {
    const { key } = await payer();
    const bad = (url: string) =>
      t.relay.inject({
        method: 'POST',
        url,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        payload: '{"prompt": ',
      });
    const sunoAnswer = await bad('/suno/submit/music');
    expect(sunoAnswer.statusCode).toBe(400);
    expect(sunoAnswer.json()).toMatchObject({ code: 'invalid_request', data: null });
    const mjAnswer = await bad('/mj/submit/imagine');
    expect(mjAnswer.statusCode).toBe(400);
    expect(mjAnswer.json()).toMatchObject({ code: 400, type: 'turnpike_error' });
  });

  it('refunds failed lyrics once and fails tasks past the time-out, counting each refund once', async () => {
    const scrape = async () => (await t.relay.inject({ method: 'GET', url: '/metrics' })).body;
    const refundsOf = (text: string, reason: string) =>
      readSample(text, 'turnpike_task_refunds_total', { provider: 'suno', reason }) ?? 0;
    const before = await scrape();
    const { user, key } = await payer();
    const lyrics = (await submit(key, 'lyrics', { prompt: 'verses' })).json() as { data: string };
    const music = (await submit(key, 'music', { prompt: 'chorus' })).json() as { data: string };
    await waitFor(async () =>
      (await quotaOfUser(user.id)) === 1_000_000 - quotaOf(LYRICS_PRICE) - quotaOf(MUSIC_PRICE)
        ? true
        : undefined,
    );
    suno.fail(lyrics.data, 'lyrics generation failed');
    await poll();
    await poll();
    expect(await quotaOfUser(user.id)).toBe(1_000_000 - quotaOf(MUSIC_PRICE));
    const failed = await scrape();
    expect(refundsOf(failed, 'failure') - refundsOf(before, 'failure')).toBe(1);
    expect(
      (readSample(failed, 'turnpike_task_submits_total', {
        provider: 'suno',
        action: 'LYRICS',
        outcome: 'accepted',
      }) ?? 0) -
        (readSample(before, 'turnpike_task_submits_total', {
          provider: 'suno',
          action: 'LYRICS',
          outcome: 'accepted',
        }) ?? 0),
    ).toBe(1);
    const timedOut = await poll(Date.now() + 2 * 60 * 60_000);
    // That pass times out every unfinished task (drawings too): each refund it paid is counted once, as a timeout.
    const timeouts = (text: string) =>
      readSample(text, 'turnpike_task_refunds_total', { reason: 'timeout' }) ?? 0;
    const after = await scrape();
    expect(timeouts(after) - timeouts(failed)).toBe(timedOut.report.refunded);
    expect(refundsOf(after, 'timeout') - refundsOf(failed, 'timeout')).toBeGreaterThanOrEqual(1);
    const rows = await db().select().from(tasks).where(eq(tasks.userId, user.id));
    expect(Object.fromEntries(rows.map((row) => [row.taskId, [row.status, row.failReason]]))).toEqual({
      [lyrics.data]: ['FAILURE', 'lyrics generation failed'],
      [music.data]: ['FAILURE', expect.stringMatching(/timed out/)],
    });
    expect(await quotaOfUser(user.id)).toBe(1_000_000);
  });
});

describe('several relay processes', () => {
  it('pay a refund once when two relays poll the same failed task at once', async () => {
    const second = injectThroughServer(await buildRelayApp(t.runtime.deps, { flushIntervalMs: 20 }));
    await second.ready();
    try {
      const { user, key } = await payer();
      const mjIds = [await submitImagine(key), await submitImagine(key)];
      await waitFor(async () =>
        (await quotaOfUser(user.id)) === 1_000_000 - 2 * quotaOf(IMAGINE_PRICE) ? true : undefined,
      );
      for (const id of mjIds) mj.fail(id, 'upstream crashed');
      const outcomes = await Promise.all([
        taskPollerOf(t.relay).runOnce(),
        taskPollerOf(second).runOnce(),
        taskPollerOf(t.relay).runOnce(),
        taskPollerOf(second).runOnce(),
      ]);
      // Only one of the two relays polled (the lease), and the refunds were paid once each.
      const leaders = new Set(outcomes.flatMap((o, i) => (o.leader ? [i % 2] : [])));
      expect(leaders.size).toBe(1);
      expect(await quotaOfUser(user.id)).toBe(1_000_000);
      const refunds = await db()
        .select()
        .from(logs)
        .where(and(eq(logs.userId, user.id), eq(logs.type, LogType.System)));
      expect(refunds).toHaveLength(2);
    } finally {
      await second.close();
    }
  });

  it('lets one poller hold the lease at a time (Redis when configured, else the database)', async () => {
    const second: FastifyInstance = await buildRelayApp(t.runtime.deps, { flushIntervalMs: 20 });
    await second.ready();
    try {
      const [a, b] = await Promise.all([taskPollerOf(t.relay).runOnce(), taskPollerOf(second).runOnce()]);
      expect([a.leader, b.leader].filter(Boolean)).toHaveLength(1);
      // The holder keeps it on its next pass; the other still gets nothing.
      const holder = a.leader ? t.relay : second;
      const other = a.leader ? second : t.relay;
      expect((await taskPollerOf(holder).runOnce()).leader).toBe(true);
      expect((await taskPollerOf(other).runOnce()).leader).toBe(false);
    } finally {
      await second.close();
    }
  });

  it('hands the lease over when its holder gives it up or lets it expire', async () => {
    let clock = 1_000_000;
    const name = `lease-test-${Math.random().toString(36).slice(2, 8)}`;
    const [one, two] = [
      createDatabaseLease(db(), name, () => clock),
      createDatabaseLease(db(), name, () => clock),
    ];
    expect(await one.acquire(1000)).toBe(true);
    expect(await two.acquire(1000)).toBe(false);
    clock += 500;
    expect(await one.acquire(1000)).toBe(true);
    // Renewed at 1_000_500, the lease lasts until 1_001_500 (past the first expiry).
    clock += 900;
    expect(await two.acquire(1000)).toBe(false);
    clock += 200;
    // It ran out: two takes over, and one is now refused.
    expect(await two.acquire(1000)).toBe(true);
    expect(await one.acquire(1000)).toBe(false);
    await two.release();
    expect(await one.acquire(1000)).toBe(true);
    await one.release();

    const redis = t.runtime.deps.redis;
    if (redis) {
      const prefix = `${t.config.redisKeyPrefix}lease-test:`;
      const [first, next] = [createRedisLease(redis, prefix), createRedisLease(redis, prefix)];
      expect(await first.acquire(60_000)).toBe(true);
      expect(await next.acquire(60_000)).toBe(false);
      await first.release();
      expect(await next.acquire(60_000)).toBe(true);
      expect(await first.acquire(60_000)).toBe(false);
      await next.release();
    }
  });

  it('pays a refund once when two relay processes of their own (Postgres) poll at once', async ({ skip }) => {
    if (!t.config.databaseUrl) skip();
    const other = await createTestApp({
      databaseUrl: t.config.databaseUrl,
      redisKeyPrefix: t.config.redisKeyPrefix,
    });
    const relay = await buildRelayApp(other.runtime.deps, { flushIntervalMs: 20 });
    await relay.ready();
    try {
      const { user, key } = await payer();
      const mjIds = [await submitImagine(key), await submitImagine(key), await submitImagine(key)];
      await waitFor(async () =>
        (await quotaOfUser(user.id)) === 1_000_000 - 3 * quotaOf(IMAGINE_PRICE) ? true : undefined,
      );
      for (const id of mjIds) mj.fail(id, 'upstream crashed');
      const outcomes = await Promise.all(
        Array.from({ length: 6 }, (_, i) => taskPollerOf(i % 2 === 0 ? t.relay : relay).runOnce()),
      );
      expect(new Set(outcomes.flatMap((o, i) => (o.leader ? [i % 2] : []))).size).toBe(1);
      // Both processes fail the same tasks directly too, as a stalled poller waking up would.
      const rows = await Promise.all(mjIds.map(drawing));
      await Promise.all(
        rows.flatMap((row) =>
          [t.runtime.deps, other.runtime.deps].map((deps) =>
            failAndRefund(deps.db, deps.bus, {
              kind: 'drawing',
              id: row!.id,
              reason: 'late',
              now: Date.now(),
            }),
          ),
        ),
      );
      expect(await quotaOfUser(user.id)).toBe(1_000_000);
      const refunds = await db()
        .select()
        .from(logs)
        .where(and(eq(logs.userId, user.id), eq(logs.type, LogType.System)));
      expect(refunds).toHaveLength(3);
    } finally {
      await relay.close();
      await other.close();
    }
  });

  it('credits a failure once however many processes finish it at the same moment', async () => {
    const { user, key } = await payer();
    const mjId = await submitImagine(key);
    await waitFor(async () => ((await quotaOfUser(user.id)) < 1_000_000 ? true : undefined));
    const row = await drawing(mjId);
    const results = await Promise.all(
      Array.from({ length: 6 }, () =>
        failAndRefund(db(), t.runtime.deps.bus, {
          kind: 'drawing',
          id: row!.id,
          reason: 'raced',
          now: Date.now(),
        }),
      ),
    );
    expect(results.filter((quota) => quota > 0)).toEqual([quotaOf(IMAGINE_PRICE)]);
    expect(await quotaOfUser(user.id)).toBe(1_000_000);
  });
});
