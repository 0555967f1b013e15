import type { ChannelView } from '@turnpike/core/contracts/channels';
import { channels } from '@turnpike/core/db/schema/index';
import { createRedisBus } from '@turnpike/core/events/bus';
import { createChannelCache } from '@turnpike/relay/state/channel-cache';
import { type FakePromptCache, startFakePromptCache } from '@turnpike/relay/testing/fake-prompt-cache';
import { waitFor } from '@turnpike/relay/testing/wait';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createRelayTestApp, type RelayTestApp } from '../testing/all-test-app.ts';
import { type ConsoleClient, setupRoot } from '../testing/test-app.ts';

const K1 = 'sk-pool-key-one-000000001';
const K2 = 'sk-pool-key-two-000000002';
const K3 = 'sk-pool-key-three-0000003';

let t: RelayTestApp;
let root: ConsoleClient;
let fake: FakePromptCache;
let auth: Record<string, string>;

const chat = (content = 'hi') =>
  t.relay.inject({
    method: 'POST',
    url: '/v1/chat/completions',
    headers: auth,
    payload: { model: 'pool-model', messages: [{ role: 'user', content }] },
  });

const row = async (id: number) =>
  (await t.runtime.deps.db.select().from(channels).where(eq(channels.id, id)))[0]!;

async function createPool(mode: 'random' | 'polling', keys = [K1, K2, K3]): Promise<number> {
  const r = await root.post('/api/channel/', {
    mode: 'multi_to_single',
    multi_key_mode: mode,
    channel: { name: 'pool', type: 1, key: keys.join('\n'), base_url: fake.url, models: 'pool-model' },
  });
  expect(r.json()).toMatchObject({ success: true });
  return (r.json().data as ChannelView[])[0]!.id;
}

beforeAll(async () => {
  fake = await startFakePromptCache({ [K1]: 'ok', [K2]: 'ok', [K3]: 'ok' });
  t = await createRelayTestApp();
  root = await setupRoot(t.app);
  await t.startRelay();
  const user = await t.seedUser({ quota: 100_000_000 });
  const token = await t.seedToken(user.id);
  auth = { authorization: `Bearer sk-${token.key}` };
  const { options } = t.runtime.deps;
  await options.set('RetryTimes', '2');
  await options.set('AutomaticDisableChannelEnabled', 'true');
  await options.set('ModelRatio', JSON.stringify({ 'pool-model': 1 }));
});
afterAll(async () => {
  await t.close();
  await fake.close();
});
beforeEach(async () => {
  await root.post('/api/channel/batch', {
    ids: (await t.runtime.deps.db.select().from(channels)).map((c) => c.id),
  });
  for (const key of [K1, K2, K3]) fake.setKey(key, 'ok');
  fake.calls.clear();
});

describe('multi-key channels on the relay', () => {
  it('spreads calls over the keys in turn in polling mode', async () => {
    await createPool('polling');
    for (let i = 0; i < 6; i += 1) {
      const r = await chat();
      expect(r.statusCode, r.body).toBe(200);
    }
    expect([fake.calls.get(K1), fake.calls.get(K2), fake.calls.get(K3)]).toEqual([2, 2, 2]);
  });

  it('uses every key in random mode', async () => {
    await createPool('random');
    for (let i = 0; i < 30; i += 1) expect((await chat()).statusCode).toBe(200);
    for (const key of [K1, K2, K3]) expect(fake.calls.get(key) ?? 0).toBeGreaterThan(0);
  });

  it('disables a revoked key on its own, with the reason and time, and serves the call with another key', async () => {
    const id = await createPool('polling');
    fake.setKey(K1, 'revoked');
    const first = await chat();
    expect(first.statusCode).toBe(200);
    const stored = await waitFor(async () => {
      const info = JSON.parse((await row(id)).channelInfo ?? '{}');
      return info.multi_key_status_list?.['0'] === 3 ? info : undefined;
    });
    expect(stored.multi_key_disabled_reason['0']).toContain('401');
    expect(stored.multi_key_disabled_time['0']).toBeGreaterThan(1_700_000_000);
    expect((await row(id)).status).toBe(1);
    fake.calls.clear();
    for (let i = 0; i < 4; i += 1) expect((await chat()).statusCode).toBe(200);
    expect(fake.calls.get(K1)).toBeUndefined();
    expect((fake.calls.get(K2) ?? 0) + (fake.calls.get(K3) ?? 0)).toBe(4);
  });

  it('rests a rate-limited key without disabling it, and the other keys serve meanwhile', async () => {
    const id = await createPool('polling');
    fake.setKey(K1, 'rate-limited');
    expect((await chat()).statusCode).toBe(200);
    expect(fake.calls.get(K1)).toBe(1);
    fake.setKey(K1, 'ok');
    for (let i = 0; i < 4; i += 1) expect((await chat()).statusCode).toBe(200);
    expect(fake.calls.get(K1)).toBe(1); // resting for the upstream's retry-after (30 s)
    const info = JSON.parse((await row(id)).channelInfo ?? '{}');
    expect(info.multi_key_status_list).toEqual({});
  });

  it('disables a key out of quota, and the channel only when its last key is gone', async () => {
    const id = await createPool('random', [K1, K2]);
    fake.setKey(K1, 'no-quota');
    fake.setKey(K2, 'revoked');
    const response = await chat();
    expect(response.statusCode).toBeGreaterThanOrEqual(400);
    const disabled = await waitFor(async () => {
      const r = await row(id);
      return r.status === 3 ? r : undefined;
    });
    expect(JSON.parse(disabled.otherInfo ?? '{}').status_reason).toBe(
      'every key of this channel is disabled',
    );
    expect(JSON.parse(disabled.channelInfo ?? '{}').multi_key_status_list).toEqual({ 0: 3, 1: 3 });
    // Re-enabling one key from the console brings the channel back.
    fake.setKey(K1, 'ok');
    const enabled = await root.post('/api/channel/multi_key/manage', {
      channel_id: id,
      action: 'enable_key',
      key_index: 0,
    });
    expect(enabled.json()).toMatchObject({ success: true });
    expect((await row(id)).status).toBe(1);
    expect((await chat()).statusCode).toBe(200);
  });

  it('keeps key state across a restart: a fresh process never uses a disabled key', async () => {
    const id = await createPool('polling');
    fake.setKey(K2, 'revoked');
    for (let i = 0; i < 3; i += 1) expect((await chat()).statusCode).toBe(200);
    await waitFor(async () =>
      JSON.parse((await row(id)).channelInfo ?? '{}').multi_key_status_list?.['1'] === 3 ? true : undefined,
    );
    const { db, bus, config } = t.runtime.deps;
    const fresh = createChannelCache({ db, bus, cryptoSecret: config.cryptoSecret, resyncMs: 0 });
    try {
      await fresh.load();
      expect(fresh.isAvailable(id)).toBe(true);
      const used = new Set<string | undefined>();
      for (let i = 0; i < 6; i += 1) used.add(fresh.withKey(id)?.key);
      expect([...used].sort()).toEqual([K1, K3].sort());
    } finally {
      fresh.close();
    }
  });
});

describe.skipIf(!process.env.TEST_REDIS_URL)('key state shared between processes', () => {
  it('rests a rate-limited key in another process, and only that key', async () => {
    const prefix = `turnpike-test:keyrest-${Math.random().toString(36).slice(2, 8)}:`;
    const here = await createRedisBus(process.env.TEST_REDIS_URL as string, prefix);
    const there = await createRedisBus(process.env.TEST_REDIS_URL as string, prefix);
    const { db, config } = t.runtime.deps;
    const id = await createPool('polling', [K1, K2]);
    const elsewhere = createChannelCache({ db, bus: there, cryptoSecret: config.cryptoSecret, resyncMs: 0 });
    try {
      await elsewhere.load();
      const rested = elsewhere.get(id)?.keys?.find((k) => k.key === K1);
      expect(rested).toBeDefined();
      await here.publish({
        type: 'channels.cooldown',
        id,
        until: Date.now() + 60_000,
        key: rested!.fingerprint,
      });
      await waitFor(
        () => (elsewhere.keyStates.restingUntil(id, rested!.fingerprint) ? true : undefined),
        1_000,
      );
      expect(elsewhere.isAvailable(id)).toBe(true);
      for (let i = 0; i < 4; i += 1) expect(elsewhere.withKey(id)?.key).toBe(K2);
      expect(elsewhere.health().find((h) => h.channelId === id)?.state).toBe('enabled');
      // Both keys resting: the channel rests too, and its health says so until the first key is back.
      const other = elsewhere.get(id)?.keys?.find((k) => k.key === K2);
      await here.publish({
        type: 'channels.cooldown',
        id,
        until: Date.now() + 30_000,
        key: other!.fingerprint,
      });
      await waitFor(() => (elsewhere.isAvailable(id) ? undefined : true), 1_000);
      expect(elsewhere.health().find((h) => h.channelId === id)).toMatchObject({ state: 'cooling_down' });
    } finally {
      elsewhere.close();
      await here.close();
      await there.close();
    }
  });
});
