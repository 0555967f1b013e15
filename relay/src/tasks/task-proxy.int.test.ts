/** A task channel with an outbound proxy (`setting.proxy`) reaches its upstream through it, like every channel. */

import { type FakeProxy, startHttpProxy } from '@turnpike/core/testing/fake-proxies';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type FakeMidjourney,
  type FakeSuno,
  startFakeMidjourney,
  startFakeSuno,
} from '../testing/fake-task-upstreams.ts';
import { createRelayTestApp, type RelayTestApp } from '../testing/relay-test-app.ts';

let t: RelayTestApp;
let mj: FakeMidjourney;
let suno: FakeSuno;
let proxy: FakeProxy;

beforeAll(async () => {
  t = await createRelayTestApp();
  mj = await startFakeMidjourney('mj-secret');
  suno = await startFakeSuno('suno-key');
  proxy = await startHttpProxy();
  await t.runtime.deps.options.set('ModelPrice', JSON.stringify({ mj_imagine: 0.1, suno_music: 0.1 }));
  await t.seedChannel({
    type: 2,
    key: 'mj-secret',
    baseUrl: mj.url,
    models: 'mj_imagine',
    setting: { proxy: proxy.url },
  });
  await t.seedChannel({
    type: 36,
    key: 'suno-key',
    baseUrl: suno.url,
    models: 'suno_music',
    setting: { proxy: proxy.url },
  });
  await t.startRelay();
});
afterAll(async () => {
  await t?.close();
  await mj?.close();
  await suno?.close();
  await proxy?.close();
});

describe('task channels behind an outbound proxy', () => {
  it('submits drawings and music through the channel proxy', async () => {
    const user = await t.seedUser({ quota: 10_000_000 });
    const key = `sk-${(await t.seedToken(user.id)).key}`;
    const drawing = await t.relay.inject({
      method: 'POST',
      url: '/mj/submit/imagine',
      headers: { 'mj-api-secret': key },
      payload: { prompt: 'a lighthouse at dusk' },
    });
    expect(drawing.statusCode).toBe(200);
    expect(drawing.json().code).toBe(1);
    const music = await t.relay.inject({
      method: 'POST',
      url: '/suno/submit/music',
      headers: { authorization: `Bearer ${key}` },
      payload: { prompt: 'a song about lighthouses', mv: 'chirp-v3-5' },
    });
    expect(music.statusCode, music.body).toBe(200);
    const hosts = (url: string) => new URL(url).host;
    expect(proxy.targets).toEqual(expect.arrayContaining([hosts(mj.url), hosts(suno.url)]));
  });
});
