import { channels } from '@turnpike/core/db/schema/index';
import { createRedisBus } from '@turnpike/core/events/bus';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRelayTestApp, type RelayTestApp } from '../testing/relay-test-app.ts';
import { sleep, waitFor } from '../testing/wait.ts';
import { type ChannelCache, createChannelCache } from './channel-cache.ts';

const policy = { failures: 2, windowMs: 60_000, cooldownMs: 120_000 };

describe('channel cache health', () => {
  let t: RelayTestApp;
  let cache: ChannelCache;
  let now = 1_700_000_000_000;
  const ids: Record<'enabled' | 'manual' | 'auto' | 'flaky', number> = {
    enabled: 0,
    manual: 0,
    auto: 0,
    flaky: 0,
  };

  beforeAll(async () => {
    t = await createRelayTestApp();
    const { db } = t.runtime.deps;
    for (const name of Object.keys(ids) as (keyof typeof ids)[]) {
      ids[name] = (await t.seedChannel({ key: 'sk-x', baseUrl: 'http://127.0.0.1:9', models: 'm', name })).id;
    }
    await db.update(channels).set({ status: 2 }).where(eq(channels.id, ids.manual));
    await db.update(channels).set({ status: 3 }).where(eq(channels.id, ids.auto));
    cache = createChannelCache({
      db,
      bus: t.runtime.deps.bus,
      cryptoSecret: t.config.cryptoSecret,
      resyncMs: 0,
      now: () => now,
    });
    await cache.load();
  });
  afterAll(async () => {
    cache?.close();
    await t?.close();
  });

  it('reports each channel as enabled, disabled, auto-disabled or cooling down', () => {
    cache.cooldown.recordFailure(ids.flaky, policy);
    expect(cache.isAvailable(ids.flaky)).toBe(true);
    cache.cooldown.recordFailure(ids.flaky, policy);
    expect(cache.isAvailable(ids.flaky)).toBe(false);
    expect(cache.health()).toEqual([
      { channelId: ids.enabled, name: 'enabled', state: 'enabled' },
      { channelId: ids.manual, name: 'manual', state: 'disabled' },
      { channelId: ids.auto, name: 'auto', state: 'auto_disabled' },
      { channelId: ids.flaky, name: 'flaky', state: 'cooling_down', coolingUntil: now + policy.cooldownMs },
    ]);
  });

  it('keeps a cool-down across a reload of the routing table, and ends it when its time is up', async () => {
    await t.runtime.deps.bus.publish({ type: 'channels.changed', ids: [ids.flaky] });
    await sleep(60);
    await cache.load();
    expect(cache.isAvailable(ids.flaky)).toBe(false);
    now += policy.cooldownMs;
    expect(cache.isAvailable(ids.flaky)).toBe(true);
    expect(cache.health().find((h) => h.channelId === ids.flaky)?.state).toBe('enabled');
  });

  it('marks a channel disabled at once and shows it', () => {
    cache.markDisabled(ids.enabled);
    expect(cache.isAvailable(ids.enabled)).toBe(false);
    expect(cache.health().find((h) => h.channelId === ids.enabled)?.state).toBe('auto_disabled');
  });
});

describe.skipIf(!process.env.TEST_REDIS_URL)('channel health shared between processes', () => {
  it('rests a channel in another process within a second of the cool-down decided here', async () => {
    const prefix = `turnpike-test:cool-${Math.random().toString(36).slice(2, 8)}:`;
    const here = await createRedisBus(process.env.TEST_REDIS_URL as string, prefix);
    const there = await createRedisBus(process.env.TEST_REDIS_URL as string, prefix);
    const t2 = await createRelayTestApp();
    const channel = await t2.seedChannel({ key: 'sk-x', baseUrl: 'http://127.0.0.1:9', models: 'm' });
    const elsewhere = createChannelCache({
      db: t2.runtime.deps.db,
      bus: there,
      cryptoSecret: t2.config.cryptoSecret,
      resyncMs: 0,
    });
    try {
      await elsewhere.load();
      expect(elsewhere.isAvailable(channel.id)).toBe(true);
      const started = Date.now();
      await here.publish({ type: 'channels.cooldown', id: channel.id, until: Date.now() + 60_000 });
      await waitFor(() => (elsewhere.isAvailable(channel.id) ? undefined : true), 1_000);
      expect(Date.now() - started).toBeLessThan(1_000);
      expect(elsewhere.health()[0]?.state).toBe('cooling_down');
    } finally {
      elsewhere.close();
      await here.close();
      await there.close();
      await t2.close();
    }
  });
});
