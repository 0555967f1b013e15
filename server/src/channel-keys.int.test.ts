import { createChannelKeyBox } from '@turnpike/core/channels/channel-key';
import type { ChannelView, KeyStatusPage } from '@turnpike/core/contracts/channels';
import { abilities, channels } from '@turnpike/core/db/schema/index';
import { startFakePromptCache } from '@turnpike/relay/testing/fake-prompt-cache';
import { eq } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  type ConsoleClient,
  createTestApp,
  saveOption,
  setupRoot,
  type TestApp,
} from './testing/test-app.ts';

const KEYS = ['sk-multi-aaaa-0000000001', 'sk-multi-bbbb-0000000002', 'sk-multi-cccc-0000000003'];

describe('multi-key channels through /api', () => {
  let t: TestApp;
  let root: ConsoleClient;
  const bodies: string[] = [];
  const call = async (r: Promise<LightMyRequestResponse>) => {
    const response = await r;
    bodies.push(response.body);
    return response;
  };
  const post = (url: string, body?: unknown) => call(root.post(url, body));
  const put = (url: string, body?: unknown) => call(root.put(url, body));
  const manage = async (body: Record<string, unknown>) =>
    (await post('/api/channel/multi_key/manage', body)).json();
  const db = () => t.runtime.deps.db;
  const storedKeys = async (id: number) => {
    const [row] = await db().select().from(channels).where(eq(channels.id, id));
    return createChannelKeyBox(t.runtime.deps.config.cryptoSecret).open(row!.key);
  };
  const createMulti = async (extra: Record<string, unknown> = {}) => {
    const r = await post('/api/channel/', {
      mode: 'multi_to_single',
      multi_key_mode: 'polling',
      channel: { name: 'pool', type: 1, key: KEYS.join('\n'), models: 'gpt-4o', group: 'default', ...extra },
    });
    expect(r.json()).toMatchObject({ success: true });
    return (r.json().data as ChannelView[])[0]!;
  };

  beforeAll(async () => {
    t = await createTestApp();
    root = await setupRoot(t.app);
  });
  afterAll(async () => {
    await t.close();
  });
  beforeEach(async () => {
    await db().delete(abilities);
    await db().delete(channels);
  });

  it('creates one multi-key channel from the reference body, with channel_info and the keys sealed', async () => {
    const created = await createMulti();
    expect(created.channel_info).toMatchObject({
      is_multi_key: true,
      multi_key_size: 3,
      multi_key_status_list: {},
      multi_key_polling_index: 0,
      multi_key_mode: 'polling',
    });
    expect(await db().select().from(channels)).toHaveLength(1);
    expect(await storedKeys(created.id)).toBe(KEYS.join('\n'));
    const [row] = await db().select().from(channels);
    expect(row!.key).not.toContain('sk-multi');
  });

  it('keeps batch (one channel per line) as the default and refuses several keys in single mode', async () => {
    const batch = await post('/api/channel/', {
      name: 'b',
      type: 1,
      key: KEYS.slice(0, 2).join('\n'),
      models: 'gpt-4o',
    });
    expect(batch.json().data).toHaveLength(2);
    const single = await post('/api/channel/', {
      mode: 'single',
      channel: { name: 's', type: 1, key: KEYS.join('\n'), models: 'gpt-4o' },
    });
    expect(single.statusCode).toBe(400);
    expect(single.json()).toMatchObject({
      success: false,
      message: expect.stringContaining('mode single takes one key'),
    });
    const badMode = await post('/api/channel/', { mode: 'multi', name: 'x', key: 'sk-1', models: 'gpt-4o' });
    expect(badMode.json()).toMatchObject({
      success: false,
      message: expect.stringContaining('mode must be'),
    });
    expect(await db().select().from(channels)).toHaveLength(2);
  });

  it('lists, disables, enables and deletes keys; the channel goes off with its last key and back with one', async () => {
    const { id } = await createMulti();
    const status = await manage({ channel_id: id, action: 'get_key_status' });
    expect(status.success).toBe(true);
    const page = status.data as KeyStatusPage;
    expect(page).toMatchObject({
      total: 3,
      enabled_count: 3,
      manual_disabled_count: 0,
      multi_key_mode: 'polling',
    });
    expect(page.keys.map((k) => k.index)).toEqual([0, 1, 2]);
    for (const key of page.keys) expect(KEYS.some((k) => k === key.key_preview)).toBe(false);

    expect((await manage({ channel_id: id, action: 'disable_key', key_index: 1 })).success).toBe(true);
    const afterOne = (await manage({ channel_id: id, action: 'get_key_status', status: 2 }))
      .data as KeyStatusPage;
    expect(afterOne.keys).toEqual([
      expect.objectContaining({ index: 1, status: 2, disabled_reason: 'disabled by hand' }),
    ]);

    await manage({ channel_id: id, action: 'disable_all_keys' });
    let [row] = await db().select().from(channels).where(eq(channels.id, id));
    expect(row!.status).toBe(3);
    expect((await db().select().from(abilities).where(eq(abilities.channelId, id)))[0]!.enabled).toBe(false);

    const refused = await put('/api/channel/', { id, status: 1 });
    expect(refused.json()).toMatchObject({
      success: false,
      message: expect.stringContaining('enable a key'),
    });
    await manage({ channel_id: id, action: 'enable_key', key_index: 2 });
    [row] = await db().select().from(channels).where(eq(channels.id, id));
    expect(row!.status).toBe(1);

    const deleted = await manage({ channel_id: id, action: 'delete_disabled_keys' });
    expect(deleted).toMatchObject({ success: true, message: '2 disabled keys deleted' });
    expect(await storedKeys(id)).toBe(KEYS[2]);
    const last = await manage({ channel_id: id, action: 'delete_key', key_index: 0 });
    expect(last).toMatchObject({ success: false, message: expect.stringContaining('last key') });
    const outOfRange = await manage({ channel_id: id, action: 'enable_key', key_index: 9 });
    expect(outOfRange).toMatchObject({ success: false, message: expect.stringContaining('key_index') });
    const missing = await manage({ channel_id: id, action: 'enable_key' });
    expect(missing).toMatchObject({ success: false, message: 'key_index is required for this action' });
  });

  it('appends keys without retyping the others and replaces keeping surviving keys state', async () => {
    const { id } = await createMulti();
    await manage({ channel_id: id, action: 'disable_key', key_index: 0 });
    const appended = await put('/api/channel/', { id, key: 'sk-multi-dddd-0000000004', key_mode: 'append' });
    expect(appended.json().data.channel_info).toMatchObject({
      multi_key_size: 4,
      multi_key_status_list: { 0: 2 },
    });
    const replaced = await put('/api/channel/', {
      id,
      key: `${KEYS[0]}\nsk-multi-eeee-0000000005`,
      key_mode: 'replace',
      multi_key_mode: 'random',
    });
    expect(replaced.json().data.channel_info).toMatchObject({
      multi_key_size: 2,
      multi_key_status_list: { 0: 2 },
      multi_key_mode: 'random',
    });
    expect(await storedKeys(id)).toBe(`${KEYS[0]}\nsk-multi-eeee-0000000005`);
    // A blank key changes no key.
    await put('/api/channel/', { id, name: 'renamed', key: '' });
    expect(await storedKeys(id)).toBe(`${KEYS[0]}\nsk-multi-eeee-0000000005`);
  });

  it('turns a single-key channel into a multi-key one on append and refuses two keys without it', async () => {
    const [single] = (
      await post('/api/channel/', { name: 'one', type: 1, key: KEYS[0], models: 'gpt-4o' })
    ).json().data as ChannelView[];
    const refused = await put('/api/channel/', { id: single!.id, key: KEYS.slice(1).join('\n') });
    expect(refused.json()).toMatchObject({
      success: false,
      message: expect.stringContaining('key_mode append'),
    });
    const notMulti = await manage({ channel_id: single!.id, action: 'get_key_status' });
    expect(notMulti).toMatchObject({ success: false, message: 'this channel is not a multi-key channel' });
    const made = await put('/api/channel/', { id: single!.id, key: KEYS[1], key_mode: 'append' });
    expect(made.json().data.channel_info).toMatchObject({ is_multi_key: true, multi_key_size: 2 });
    expect(await storedKeys(single!.id)).toBe(`${KEYS[0]}\n${KEYS[1]}`);
  });

  it('a channel test that finds its first key revoked disables that key, not the channel', async () => {
    const fake = await startFakePromptCache({ [KEYS[0]!]: 'revoked', [KEYS[1]!]: 'ok', [KEYS[2]!]: 'ok' });
    try {
      await saveOption(root, 'AutomaticDisableChannelEnabled', 'true');
      const { id } = await createMulti({ base_url: fake.url });
      const tested = (await call(root.get(`/api/channel/test/${id}`))).json();
      expect(tested).toMatchObject({
        success: false,
        message: expect.stringContaining('the key was disabled'),
      });
      const [row] = await db().select().from(channels).where(eq(channels.id, id));
      expect(row!.status).toBe(1);
      expect(JSON.parse(row!.channelInfo!).multi_key_status_list).toEqual({ 0: 3 });
      // The next test uses the next enabled key and passes.
      expect((await call(root.get(`/api/channel/test/${id}`))).json()).toMatchObject({ success: true });
    } finally {
      await saveOption(root, 'AutomaticDisableChannelEnabled', 'false');
      await fake.close();
    }
  });

  it('finds a multi-key channel by any of its keys and never sends a key to the browser', async () => {
    const { id } = await createMulti();
    const found = (await call(root.get(`/api/channel/search?keyword=${KEYS[1]}`))).json();
    expect(found.data.items.map((c: ChannelView) => c.id)).toEqual([id]);
    for (const body of bodies) for (const key of KEYS) expect(body).not.toContain(key);
  });
});
