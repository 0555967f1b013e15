/**
 * Task charges follow per-group prices (docs/adr/0017): a Midjourney or Suno submit by a caller whose group has
 * its own `GroupModelPrice` entry pays that price (GroupRatio not applied, the log says group ratio 1); a caller of
 * another group pays `ModelPrice` × its group ratio; a group with only a ratio of its own for a task model still pays
 * the per-call price × its group ratio (a task has no tokens to apply a ratio to).
 */

import { logs, users } from '@turnpike/core/db/schema/index';
import { LogType } from '@turnpike/core/domain/logs';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type FakeMidjourney,
  type FakeSuno,
  startFakeMidjourney,
  startFakeSuno,
} from '../testing/fake-task-upstreams.ts';
import { createRelayTestApp, type RelayTestApp } from '../testing/relay-test-app.ts';
import { waitFor } from '../testing/wait.ts';

const QUOTA_PER_UNIT = 500_000;
const START = 10_000_000;
const GROUP_RATIO = { default: 1.5, vip: 2 } as const;
const PRICES = { mj_imagine: 0.2, suno_music: 0.3, suno_lyrics: 0.06 } as const;
/** vip's own per-call prices; its ratio for suno_lyrics is not a per-call price. */
const VIP_PRICES = { mj_imagine: 0.05, suno_music: 0.4 } as const;
const quotaOf = (price: number, ratio: number) => Math.trunc(price * ratio * QUOTA_PER_UNIT);

let t: RelayTestApp;
let mj: FakeMidjourney;
let suno: FakeSuno;

const db = () => t.runtime.deps.db;

async function payer(group: string) {
  const user = await t.seedUser({ quota: START, group });
  const token = await t.seedToken(user.id);
  return { user, key: `sk-${token.key}` };
}

async function quotaOfUser(id: number): Promise<number> {
  const [row] = await db().select({ quota: users.quota }).from(users).where(eq(users.id, id));
  return row?.quota ?? Number.NaN;
}

/** Waits for the balance to drop by `quota` and for its one consume log; answers the log. */
async function expectCharged(userId: number, model: string, quota: number) {
  await waitFor(async () => ((await quotaOfUser(userId)) === START - quota ? true : undefined));
  const [log, ...more] = await waitFor(async () => {
    const rows = await db()
      .select()
      .from(logs)
      .where(and(eq(logs.userId, userId), eq(logs.type, LogType.Consume)));
    return rows.length > 0 ? rows : undefined;
  });
  expect(more).toEqual([]);
  expect(log).toMatchObject({ modelName: model, quota });
  return JSON.parse(log?.other ?? '{}') as { model_price: number; group_ratio: number };
}

function imagine(key: string) {
  return t.relay.inject({
    method: 'POST',
    url: '/mj/submit/imagine',
    headers: { 'mj-api-secret': key },
    payload: { prompt: 'a toll booth at dawn' },
  });
}

function sunoSubmit(key: string, action: 'music' | 'lyrics') {
  return t.relay.inject({
    method: 'POST',
    url: `/suno/submit/${action}`,
    headers: { authorization: `Bearer ${key}` },
    payload: { prompt: 'a song about toll roads', mv: 'chirp-v3-5' },
  });
}

beforeAll(async () => {
  t = await createRelayTestApp();
  const { options } = t.runtime.deps;
  await options.set('ModelPrice', JSON.stringify(PRICES));
  await options.set('GroupRatio', JSON.stringify(GROUP_RATIO));
  await options.set('GroupModelPrice', JSON.stringify({ vip: VIP_PRICES }));
  await options.set('GroupModelRatio', JSON.stringify({ vip: { suno_lyrics: 3 } }));
  mj = await startFakeMidjourney('mj-secret');
  suno = await startFakeSuno('suno-key');
  for (const group of ['default', 'vip']) {
    await t.seedChannel({ type: 2, key: 'mj-secret', baseUrl: mj.url, models: 'mj_imagine', group });
    await t.seedChannel({
      type: 36,
      key: 'suno-key',
      baseUrl: suno.url,
      models: 'suno_music,suno_lyrics',
      group,
    });
  }
  await t.startRelay();
});

afterAll(async () => {
  await t?.close();
  await mj?.close();
  await suno?.close();
});

describe('task charges by group', () => {
  it("charges a Midjourney submit at the caller's group price, without the group ratio", async () => {
    const { user, key } = await payer('vip');
    const response = await imagine(key);
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toMatchObject({ code: 1 });
    const other = await expectCharged(user.id, 'mj_imagine', quotaOf(VIP_PRICES.mj_imagine, 1));
    expect(other).toEqual({ model_price: VIP_PRICES.mj_imagine, group_ratio: 1 });
  });

  it('charges a default-group Midjourney submit ModelPrice × its group ratio, as before', async () => {
    const { user, key } = await payer('default');
    const response = await imagine(key);
    expect(response.statusCode, response.body).toBe(200);
    const other = await expectCharged(user.id, 'mj_imagine', quotaOf(PRICES.mj_imagine, GROUP_RATIO.default));
    expect(other).toEqual({ model_price: PRICES.mj_imagine, group_ratio: GROUP_RATIO.default });
  });

  it("charges a Suno submit at the caller's group price, and the other group ModelPrice × ratio", async () => {
    const vip = await payer('vip');
    const plain = await payer('default');
    expect((await sunoSubmit(vip.key, 'music')).json()).toMatchObject({ code: 'success' });
    expect((await sunoSubmit(plain.key, 'music')).json()).toMatchObject({ code: 'success' });
    await expectCharged(vip.user.id, 'suno_music', quotaOf(VIP_PRICES.suno_music, 1));
    await expectCharged(plain.user.id, 'suno_music', quotaOf(PRICES.suno_music, GROUP_RATIO.default));
  });

  it('charges a task model the group has only a ratio for at its per-call price × the group ratio', async () => {
    const { user, key } = await payer('vip');
    expect((await sunoSubmit(key, 'lyrics')).json()).toMatchObject({ code: 'success' });
    const other = await expectCharged(user.id, 'suno_lyrics', quotaOf(PRICES.suno_lyrics, GROUP_RATIO.vip));
    expect(other).toEqual({ model_price: PRICES.suno_lyrics, group_ratio: GROUP_RATIO.vip });
  });
});
