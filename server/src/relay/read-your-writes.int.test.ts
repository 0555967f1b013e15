/**
 * Read your writes (docs/adr/0016): when the console API answers success for a change of routing or prices, the
 * next relay call of the same process already sees it — no window of `model_not_found`, however fast the edits
 * come.
 */

import { type FakeOpenAi, startFakeOpenAi } from '@turnpike/relay/testing/fake-openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRelayTestApp, type RelayTestApp } from '../testing/all-test-app.ts';
import { setupRoot } from '../testing/test-app.ts';

let t: RelayTestApp;
let fake: FakeOpenAi;
let admin: Awaited<ReturnType<typeof setupRoot>>;
let key: string;

beforeAll(async () => {
  fake = await startFakeOpenAi({});
  t = await createRelayTestApp();
  await t.startRelay();
  admin = await setupRoot(t.app);
  const user = await t.seedUser({ quota: 100_000_000 });
  key = (await t.seedToken(user.id)).key;
});

afterAll(async () => {
  await t?.close();
  await fake?.close();
});

const chat = (model: string) =>
  t.relay.inject({
    method: 'POST',
    url: '/v1/chat/completions',
    headers: { authorization: `Bearer sk-${key}` },
    payload: { model, messages: [{ role: 'user', content: 'hi' }] },
  });

const createChannel = (model: string) =>
  admin.post('/api/channel/', {
    name: `for ${model}`,
    type: 1,
    key: 'sk-upstream',
    base_url: fake.url,
    models: model,
    group: 'default',
  });

describe('a console write and the next relay call of the same process', () => {
  it('serves a channel and its price the moment the console says they are saved', async () => {
    const prices: Record<string, number> = {};
    for (let i = 0; i < 10; i += 1) {
      const model = `fresh-model-${i}`;
      expect((await createChannel(model)).json().success).toBe(true);
      prices[model] = 0.01;
      const saved = await admin.put('/api/option/', { key: 'ModelPrice', value: JSON.stringify(prices) });
      expect(saved.json().success).toBe(true);
      const answer = await chat(model);
      expect(answer.statusCode, answer.body).toBe(200);
      expect(Number(answer.headers['x-turnpike-quota'])).toBe(5_000);
    }
  });

  it('serves a new channel at once even while other edits keep arriving', async () => {
    await admin.put('/api/option/', { key: 'ModelRatio', value: JSON.stringify({ 'busy-model': 1 }) });
    let editing = true;
    const edits = (async () => {
      for (let i = 0; editing; i += 1) await createChannel(`noise-${i}`);
    })();
    try {
      for (let i = 0; i < 5; i += 1) {
        const model = `busy-model-${i}`;
        await admin.put('/api/option/', {
          key: 'ModelRatio',
          value: JSON.stringify(
            Object.fromEntries(Array.from({ length: i + 1 }, (_, j) => [`busy-model-${j}`, 1])),
          ),
        });
        expect((await createChannel(model)).json().success).toBe(true);
        const answer = await chat(model);
        expect(answer.statusCode, answer.body).toBe(200);
      }
    } finally {
      editing = false;
      await edits;
    }
  });

  it('shows in /metrics which config version it applied, how fast, and that balances are shared or not', async () => {
    const version = t.runtime.deps.bus.appliedVersion();
    expect(version).toBeGreaterThan(0);
    const text = (await t.relay.inject({ method: 'GET', url: '/metrics' })).body;
    expect(text).toMatch(new RegExp(`^turnpike_config_version_applied ${version}$`, 'm'));
    expect(text).toMatch(/^turnpike_redis_degraded 0$/m);
    expect(Number(/^turnpike_config_apply_seconds_count (\d+)$/m.exec(text)?.[1])).toBeGreaterThan(0);
    expect(text).toMatch(/^turnpike_log_queue_depth \d+$/m);
  });

  it('stops routing to a deleted channel the moment the console answers', async () => {
    const created = await createChannel('doomed-model');
    const id = (created.json().data as { id: number }[] | undefined)?.[0]?.id;
    await admin.put('/api/option/', { key: 'ModelRatio', value: JSON.stringify({ 'doomed-model': 1 }) });
    expect((await chat('doomed-model')).statusCode).toBe(200);
    const channelId =
      id ??
      (await admin.get('/api/channel/?p=0&page_size=100'))
        .json()
        .data.items.find((c: { name: string }) => c.name === 'for doomed-model').id;
    expect((await admin.delete(`/api/channel/${channelId}`)).json().success).toBe(true);
    const answer = await chat('doomed-model');
    expect(answer.statusCode).toBe(404);
    expect(answer.json().error.code).toBe('model_not_found');
  });
});
