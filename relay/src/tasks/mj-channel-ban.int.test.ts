/**
 * A Midjourney-Proxy that answers code 3 ("no available account instance") can draw nothing, so with automatic
 * disable on and the channel's auto-ban set the relay switches the channel off as the reference does: stored
 * auto-disabled (status 3) with the reason, its abilities off, and the next submit finds no channel. The client gets
 * the proxy's answer and pays nothing. With auto-ban off (or automatic disable off) the channel stays on.
 */

import { abilities, channels, midjourneys, users } from '@turnpike/core/db/schema/index';
import { ChannelStatus } from '@turnpike/core/domain/closed-sets';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSample } from '../metrics/prometheus-text.ts';
import { type FakeMidjourney, startFakeMidjourney } from '../testing/fake-task-upstreams.ts';
import { createRelayTestApp, type RelayTestApp } from '../testing/relay-test-app.ts';
import { waitFor } from '../testing/wait.ts';

const START = 10_000_000;
const NO_ACCOUNT = { code: 3, description: 'no available account instance' };

let t: RelayTestApp;
const fakes: FakeMidjourney[] = [];

const db = () => t.runtime.deps.db;

interface Proxy {
  fake: FakeMidjourney;
  channelId: number;
  userId: number;
  key: string;
}

/** One proxy and one type 5 channel serving mj_imagine to its own group, and a payer of that group. */
async function proxyFor(group: string, autoBan: number): Promise<Proxy> {
  const secret = `${group}-secret`;
  const fake = await startFakeMidjourney(secret, { firstId: 1_600_000_000_000 + fakes.length * 1_000_000 });
  fakes.push(fake);
  const channel = await t.seedChannel({
    type: 5,
    key: secret,
    baseUrl: fake.url,
    models: 'mj_imagine',
    group,
    autoBan,
    name: `${group} proxy`,
  });
  const user = await t.seedUser({ quota: START, group });
  const token = await t.seedToken(user.id);
  return { fake, channelId: channel.id, userId: user.id, key: `sk-${token.key}` };
}

function imagine(key: string) {
  return t.relay.inject({
    method: 'POST',
    url: '/mj/submit/imagine',
    headers: { authorization: `Bearer ${key}` },
    payload: { prompt: 'a lighthouse at dusk' },
  });
}

async function stored(channelId: number) {
  const [row] = await db().select().from(channels).where(eq(channels.id, channelId));
  return row;
}

async function quotaOfUser(id: number): Promise<number> {
  const [row] = await db().select({ quota: users.quota }).from(users).where(eq(users.id, id));
  return row?.quota ?? Number.NaN;
}

const submitsTo = (fake: FakeMidjourney) => fake.requests.filter((r) => r.path === '/mj/submit/imagine');

let banned: Proxy;
let kept: Proxy;
let switchedOff: Proxy;

beforeAll(async () => {
  t = await createRelayTestApp();
  const { options } = t.runtime.deps;
  await options.set('ModelPrice', JSON.stringify({ mj_imagine: 0.1 }));
  await options.set('GroupRatio', JSON.stringify({ default: 1, banned: 1, kept: 1, 'switch-off': 1 }));
  await options.set('AutomaticDisableChannelEnabled', 'true');
  banned = await proxyFor('banned', 1);
  kept = await proxyFor('kept', 0);
  switchedOff = await proxyFor('switch-off', 1);
  await t.startRelay();
});

afterAll(async () => {
  await t?.close();
  await Promise.all(fakes.map((fake) => fake.close()));
});

describe('Midjourney code 3 (no account instance)', () => {
  it('auto-disables a channel with auto-ban on, with the reason; the next submit finds no channel', async () => {
    const { fake, channelId, userId, key } = banned;
    fake.refuseNext(200, NO_ACCOUNT);

    const first = await imagine(key);
    // the client gets the proxy's answer, unbilled and unstored
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json()).toEqual(NO_ACCOUNT);

    const row = await waitFor(async () => {
      const current = await stored(channelId);
      return current?.status === ChannelStatus.AutoDisabled ? current : undefined;
    });
    const info = JSON.parse(row.otherInfo ?? '{}') as { status_reason?: string; status_time?: number };
    expect(info.status_reason).toMatch(/no available account instance/);
    expect(info.status_time).toBeGreaterThan(0);
    const routes = await db().select().from(abilities).where(eq(abilities.channelId, channelId));
    expect(routes.length).toBeGreaterThan(0);
    expect(routes.every((ability) => ability.enabled === false)).toBe(true);

    const second = await imagine(key);
    expect([404, 503], second.body).toContain(second.statusCode);
    expect(second.json()).toMatchObject({ description: expect.stringMatching(/no channel/) });
    // the refused second submit never reached the proxy
    expect(submitsTo(fake)).toHaveLength(1);
    expect(await quotaOfUser(userId)).toBe(START);
    expect(await db().select().from(midjourneys).where(eq(midjourneys.userId, userId))).toEqual([]);
    const metrics = (await t.relay.inject({ method: 'GET', url: '/metrics' })).body;
    expect(
      readSample(metrics, 'turnpike_task_submits_total', {
        provider: 'midjourney',
        action: 'IMAGINE',
        outcome: 'refused',
      }),
    ).toBeGreaterThanOrEqual(1);
  });

  it('keeps a channel with auto-ban off enabled: the next submit goes to the same proxy', async () => {
    const { fake, channelId, key } = kept;
    fake.refuseNext(200, NO_ACCOUNT);
    const first = await imagine(key);
    expect(first.statusCode).toBe(200);
    expect(first.json()).toEqual(NO_ACCOUNT);
    // a switch-off happens in memory before the answer, so the next submit tells whether there was one

    const second = await imagine(key);
    expect(second.statusCode, second.body).toBe(200);
    expect(second.json()).toMatchObject({ code: 1 });
    expect(submitsTo(fake)).toHaveLength(2);
    expect((await stored(channelId))?.status).toBe(ChannelStatus.Enabled);
  });

  it('keeps the channel enabled when automatic disable is off, even with auto-ban on', async () => {
    const { options } = t.runtime.deps;
    const { fake, channelId, key } = switchedOff;
    await options.set('AutomaticDisableChannelEnabled', 'false');
    try {
      fake.refuseNext(200, NO_ACCOUNT);
      expect((await imagine(key)).json()).toEqual(NO_ACCOUNT);
      expect((await imagine(key)).statusCode).toBe(200);
      expect(submitsTo(fake)).toHaveLength(2);
      expect((await stored(channelId))?.status).toBe(ChannelStatus.Enabled);
    } finally {
      await options.set('AutomaticDisableChannelEnabled', 'true');
    }
  });
});
