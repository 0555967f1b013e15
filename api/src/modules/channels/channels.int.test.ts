import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createChannelKeyBox } from '@turnpike/core/channels/channel-key';
import type { ChannelView } from '@turnpike/core/contracts/channels';
import { abilities, channels } from '@turnpike/core/db/schema/index';
import type { GatewayEvent } from '@turnpike/core/events/bus';
import { startHttpProxy } from '@turnpike/core/testing/fake-proxies';
import { eq } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  ConsoleClient,
  createTestApp,
  registerUser,
  setupRoot,
  type TestApp,
} from '../../testing/test-app.ts';

/** Plain keys used in this file; none may ever appear in a response body. */
const SECRET_KEYS = [
  'sk-good-0001',
  'sk-good-0002',
  'sk-good-0003',
  'sk-zero-balance',
  'sk-silicon',
  'sk-deepseek',
];

/** A fake provider that speaks the real wire formats of the calls the console back end makes. */
function startFakeUpstream(): Promise<{
  server: Server;
  url: string;
  seen: { path: string; auth: string }[];
}> {
  const seen: { path: string; auth: string }[] = [];
  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const auth = req.headers.authorization ?? '';
    seen.push({ path: url.pathname, auth });
    const key = auth.replace(/^Bearer /, '');
    if (!key.startsWith('sk-')) {
      json(res, 401, { error: { message: 'Incorrect API key provided', type: 'invalid_request_error' } });
      return;
    }
    switch (url.pathname) {
      case '/v1/models':
        json(res, 200, {
          object: 'list',
          data: [
            { id: 'gpt-4o', object: 'model', created: 1715367049, owned_by: 'system' },
            { id: 'gpt-4o-mini', object: 'model', created: 1721172741, owned_by: 'system' },
          ],
        });
        return;
      case '/v1beta/openai/models':
        json(res, 200, {
          object: 'list',
          data: [{ id: 'models/gemini-2.0-flash', object: 'model', owned_by: 'google' }],
        });
        return;
      case '/v1/dashboard/billing/subscription':
        json(res, 200, {
          object: 'billing_subscription',
          has_payment_method: true,
          hard_limit_usd: key === 'sk-zero-balance' ? 10 : 100,
          system_hard_limit_usd: 100,
          access_until: 0,
        });
        return;
      case '/v1/dashboard/billing/usage':
        json(res, 200, { object: 'list', total_usage: key === 'sk-zero-balance' ? 1000 : 2550 });
        return;
      case '/v1/user/info':
        json(res, 200, {
          code: 20000,
          message: 'OK',
          status: true,
          data: { id: 'u1', name: 'n', balance: '0.88', chargeBalance: '11.62', totalBalance: '12.5' },
        });
        return;
      case '/user/balance':
        json(res, 200, {
          is_available: true,
          balance_infos: [
            {
              currency: 'CNY',
              total_balance: '110.00',
              granted_balance: '10.00',
              topped_up_balance: '100.00',
            },
          ],
        });
        return;
      default:
        json(res, 404, { error: { message: 'not found' } });
    }
  });
  server.listen(0, '127.0.0.1');
  return once(server, 'listening').then(() => ({
    server,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
  }));
}

describe('channels admin API', () => {
  let t: TestApp;
  let root: ConsoleClient;
  let upstream: Awaited<ReturnType<typeof startFakeUpstream>>;
  const events: GatewayEvent[] = [];
  const bodies: string[] = [];

  /** Every answer goes through here so the last test can check that no key ever left the server. */
  const call = async (r: Promise<LightMyRequestResponse>) => {
    const response = await r;
    bodies.push(response.body);
    return response;
  };
  const get = (url: string) => call(root.get(url));
  const post = (url: string, body?: unknown) => call(root.post(url, body));
  const put = (url: string, body?: unknown) => call(root.put(url, body));
  const del = (url: string) => call(root.delete(url));

  const db = () => t.runtime.deps.db;
  const channelCount = async () => (await db().select().from(channels)).length;
  const abilitiesOf = (id: number) => db().select().from(abilities).where(eq(abilities.channelId, id));

  const create = async (fields: Record<string, unknown>) => {
    const r = await post('/api/channel/', {
      name: 'c',
      type: 1,
      key: 'sk-good-0001',
      models: 'gpt-4o',
      group: 'default',
      ...fields,
    });
    expect(r.json()).toMatchObject({ success: true });
    return r.json().data as ChannelView[];
  };

  beforeAll(async () => {
    upstream = await startFakeUpstream();
    t = await createTestApp();
    root = await setupRoot(t.app);
    t.runtime.deps.bus.subscribe((e) => events.push(e));
  });
  afterAll(async () => {
    await t.close();
    upstream.server.close();
  });
  beforeEach(async () => {
    await db().delete(abilities);
    await db().delete(channels);
    events.length = 0;
  });

  it('refuses visitors with 401 and regular users with 403 on every channel call', async () => {
    const user = await registerUser(t.app, 'chanuser');
    const visitor = new ConsoleClient(t.app);
    const calls: [string, string][] = [
      ['GET', '/api/channel/'],
      ['GET', '/api/channel/search?keyword=a'],
      ['GET', '/api/channel/models'],
      ['GET', '/api/channel/models_enabled'],
      ['GET', '/api/channel/1'],
      ['POST', '/api/channel/'],
      ['PUT', '/api/channel/'],
      ['DELETE', '/api/channel/1'],
      ['DELETE', '/api/channel/disabled'],
      ['POST', '/api/channel/batch'],
      ['POST', '/api/channel/batch/tag'],
      ['POST', '/api/channel/fix'],
      ['POST', '/api/channel/copy/1'],
      ['POST', '/api/channel/tag/enabled'],
      ['POST', '/api/channel/tag/disabled'],
      ['PUT', '/api/channel/tag'],
      ['GET', '/api/channel/fetch_models/1'],
      ['POST', '/api/channel/fetch_models'],
      ['GET', '/api/channel/update_balance'],
      ['GET', '/api/channel/update_balance/1'],
    ];
    for (const [method, url] of calls) {
      expect(
        (await user.request(method as 'GET', url, method === 'GET' ? undefined : {})).statusCode,
        url,
      ).toBe(403);
      expect(
        (await visitor.request(method as 'GET', url, method === 'GET' ? undefined : {})).statusCode,
        url,
      ).toBe(401);
    }
  });

  it('creates one channel per key line, encrypts the keys and indexes group × model', async () => {
    const created = await create({
      name: 'batch',
      key: 'sk-good-0001\n\n sk-good-0002 \nsk-good-0003\n',
      models: 'gpt-4o,gpt-4o-mini',
      group: 'default,vip',
      base_url: 'https://api.example.test/',
    });
    expect(created).toHaveLength(3);
    const rows = await db().select().from(channels).orderBy(channels.id);
    expect(rows).toHaveLength(3);
    const box = createChannelKeyBox(t.config.cryptoSecret);
    expect(rows.map((r) => box.open(r.key))).toEqual(['sk-good-0001', 'sk-good-0002', 'sk-good-0003']);
    for (const row of rows) {
      expect(SECRET_KEYS.some((k) => row.key.includes(k))).toBe(false);
      expect(row.baseUrl).toBe('https://api.example.test');
      expect(await abilitiesOf(row.id)).toHaveLength(4);
    }
    expect(events).toContainEqual({
      type: 'channels.changed',
      ids: rows.map((r) => r.id).sort((a, b) => a - b),
    });
    const one = await get(`/api/channel/${created[0]!.id}`);
    expect(one.json().data).toMatchObject({
      name: 'batch',
      key: '',
      models: 'gpt-4o,gpt-4o-mini',
      group: 'default,vip',
    });
  });

  it('answers 404 for an unknown channel and 400 for a bad id', async () => {
    expect((await get('/api/channel/424242')).statusCode).toBe(404);
    expect((await get('/api/channel/abc')).json()).toMatchObject({
      success: false,
      message: 'id must be a positive integer',
    });
  });

  it('refuses a channel of a type the relay cannot serve, PaLM 2 naming Gemini (24), or a key that cannot work, and keeps existing rows editable', async () => {
    const before = await channelCount();
    // Spark's WebSocket key cannot work on its HTTP API: refused, naming what to enter.
    const spark = await post('/api/channel/', {
      name: 's',
      type: 18,
      key: 'app|secret|key',
      models: 'generalv3.5',
    });
    expect(spark.statusCode).toBe(400);
    expect(spark.json().message).toMatch(/WebSocket API's credential.*enter the APIPassword/);
    const palm = await post('/api/channel/', { name: 'p', type: 11, key: 'k', models: 'PaLM-2' });
    expect(palm.statusCode).toBe(400);
    expect(palm.json().message).toMatch(/retired.*Google Gemini \(24\)/);
    expect(await channelCount()).toBe(before);
    const [sparkRow] = await create({ type: 18, key: 'AbCdEf:0123456789', models: 'generalv3.5' });
    const rekeyed = await put('/api/channel/', { id: sparkRow!.id, key: 'app|secret|key' });
    expect(rekeyed.statusCode).toBe(400);
    expect(rekeyed.json().message).toMatch(/APIPassword/);
    // A row stored before (or by an older version) stays editable, but no channel moves to such a type.
    const [openai] = await create({ type: 1, key: 'sk-1', models: 'gpt-4o' });
    const moved = await put('/api/channel/', { id: openai!.id, type: 11 });
    expect(moved.statusCode).toBe(400);
    expect(moved.json().message).toMatch(/retired/);
    await db().update(channels).set({ type: 11 }).where(eq(channels.id, openai!.id));
    const renamed = await put('/api/channel/', { id: openai!.id, name: 'old palm', status: 2 });
    expect(renamed.json()).toMatchObject({ success: true, data: { type: 11, name: 'old palm' } });
    const copied = await post(`/api/channel/copy/${openai!.id}`);
    expect(copied.json()).toMatchObject({ success: false });
  });

  it('keeps a multi-line service-account key as one Vertex AI channel', async () => {
    const doc = JSON.stringify({ type: 'service_account', project_id: 'p', private_key: 'x' }, null, 2);
    const created = await create({ type: 41, key: doc, other: 'us-central1', models: 'gemini-1.5-pro' });
    expect(created).toHaveLength(1);
    const refused = await post('/api/channel/', { name: 'v', type: 41, key: doc, models: 'gemini-1.5-pro' });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().message).toMatch(/region/);
  });

  it('refuses missing fields and bad JSON fields with a clear message and stores nothing', async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ name: '' }, /channel name and channel key/],
      [{ key: '  ' }, /channel name and channel key/],
      [{ models: '' }, /at least one model/],
      [{ model_mapping: '{not json' }, /model_mapping must be valid JSON/],
      [{ model_mapping: '{"a":1}' }, /model_mapping/],
      [{ status_code_mapping: '{"x":"500"}' }, /status_code_mapping/],
      [{ setting: '[]' }, /setting must be a JSON object/],
      [{ param_override: 'nope' }, /param_override must be valid JSON/],
      [{ other_info: '{"status_time":"x"}' }, /other_info/],
      [{ type: 999 }, /unknown channel type/],
      [{ priority: -1000 }, /priority/],
    ];
    for (const [fields, message] of cases) {
      const r = await post('/api/channel/', {
        name: 'c',
        type: 1,
        key: 'sk-good-0001',
        models: 'gpt-4o',
        ...fields,
      });
      expect(r.statusCode, JSON.stringify(fields)).toBe(400);
      expect(r.json()).toMatchObject({ success: false });
      expect(r.json().message).toMatch(message);
    }
    expect(await channelCount()).toBe(0);

    const [c] = await create({ model_mapping: '{"gpt-4":"gpt-4o"}' });
    const bad = await put('/api/channel/', { id: c!.id, name: 'renamed', model_mapping: '{bad' });
    expect(bad.statusCode).toBe(400);
    const after = (await get(`/api/channel/${c!.id}`)).json().data;
    expect(after).toMatchObject({ name: 'c', model_mapping: '{"gpt-4":"gpt-4o"}' });
  });

  it('lists with paging, id sort and tag mode', async () => {
    await create({ name: 'a', priority: 1 });
    await create({ name: 'b', priority: 5, tag: 'team', models: 'gpt-4o', group: 'default' });
    await create({ name: 'c', priority: 5, tag: 'team', models: 'gpt-4o-mini', group: 'vip' });
    await create({ name: 'd', priority: 0 });

    const byPriority = (await get('/api/channel/?p=1&page_size=10')).json().data;
    expect(byPriority.total).toBe(4);
    expect(byPriority.items.map((c: { name: string }) => c.name)).toEqual(['c', 'b', 'a', 'd']);
    expect(byPriority.items.every((c: { key: string }) => c.key === '')).toBe(true);

    const byId = (await get('/api/channel/?p=1&page_size=2&id_sort=true')).json().data;
    expect(byId).toMatchObject({ total: 4, page: 1, page_size: 2 });
    expect(byId.items.map((c: { name: string }) => c.name)).toEqual(['d', 'c']);

    const tagged = (await get('/api/channel/?p=1&page_size=10&id_sort=true&tag_mode=true')).json().data;
    expect(tagged.total).toBe(3);
    const team = tagged.items.find((e: { tag: string }) => e.tag === 'team');
    expect(team).toMatchObject({ priority: 5, group: 'vip,default', used_quota: 0 });
    expect(team.children.map((c: { name: string }) => c.name).sort()).toEqual(['b', 'c']);
  });

  it('searches by keyword (id, name or exact key), group and model', async () => {
    const [a] = await create({ name: 'alpha', key: 'sk-good-0002', models: 'gpt-4o', group: 'vip' });
    await create({ name: 'beta', models: 'claude-3-haiku-20240307', group: 'default' });
    const names = async (q: string) =>
      (await get(`/api/channel/search?${q}`)).json().data.items.map((c: { name: string }) => c.name);
    expect(await names('keyword=alp')).toEqual(['alpha']);
    expect(await names(`keyword=${a!.id}`)).toEqual(['alpha']);
    expect(await names('keyword=sk-good-0002')).toEqual(['alpha']);
    expect(await names('keyword=sk-good')).toEqual([]);
    expect(await names('group=default')).toEqual(['beta']);
    expect(await names('model=claude')).toEqual(['beta']);
  });

  it('updates fully and by quick edits, with abilities following each change', async () => {
    const [c] = await create({ models: 'gpt-4o', group: 'default' });
    const id = c!.id;
    const full = await put('/api/channel/', {
      id,
      name: 'renamed',
      models: 'gpt-4o,gpt-4o-mini',
      group: 'default,vip',
      key: '',
      priority: 3,
    });
    expect(full.json()).toMatchObject({ success: true, data: { id, name: 'renamed', status: 1, key: '' } });
    expect(await abilitiesOf(id)).toHaveLength(4);
    expect((await abilitiesOf(id)).every((a) => a.priority === 3 && a.enabled)).toBe(true);

    const disabled = await put('/api/channel/', { id, status: 2 });
    expect(disabled.json().data.status).toBe(2);
    expect((await abilitiesOf(id)).every((a) => !a.enabled)).toBe(true);
    expect((await get('/api/channel/models_enabled')).json().data).toEqual([]);

    const weight = await put('/api/channel/', { id, weight: -5 });
    expect(weight.json().data).toMatchObject({ status: 2, weight: 0 });
    await put('/api/channel/', { id, status: 1, priority: 7 });
    expect((await abilitiesOf(id)).every((a) => a.enabled && a.priority === 7)).toBe(true);
    expect((await get('/api/channel/models_enabled')).json().data).toEqual(['gpt-4o', 'gpt-4o-mini']);

    const keyBefore = (await db().select().from(channels).where(eq(channels.id, id)))[0]!.key;
    await put('/api/channel/', { id, key: 'sk-good-0003' });
    const keyAfter = (await db().select().from(channels).where(eq(channels.id, id)))[0]!.key;
    expect(keyAfter).not.toBe(keyBefore);
    expect(events.filter((e) => e.type === 'channels.changed').length).toBeGreaterThanOrEqual(5);

    expect((await put('/api/channel/', { id: 99999, name: 'x' })).statusCode).toBe(404);
  });

  it('keeps max_input_tokens and refuses values its column cannot hold', async () => {
    const [c] = await create({ models: 'gpt-4o', max_input_tokens: 128000 });
    expect(c!.max_input_tokens).toBe(128000);
    expect((await get(`/api/channel/${c!.id}`)).json().data.max_input_tokens).toBe(128000);
    const tooLarge = await put('/api/channel/', { id: c!.id, max_input_tokens: 2 ** 31, weight: 2 ** 31 });
    expect(tooLarge.statusCode).toBe(400);
    expect(tooLarge.json().message).toMatch(/too large/);
    expect((await get(`/api/channel/${c!.id}`)).json().data).toMatchObject({
      max_input_tokens: 128000,
      weight: 0,
    });
  });

  it('copies a channel with its stored key and settings, starting without usage history', async () => {
    const [source] = await create({
      name: 'primary',
      key: 'sk-good-0002',
      models: 'gpt-4o,gpt-4o-mini',
      group: 'default,vip',
      priority: 4,
      weight: 9,
      tag: 'team',
      model_mapping: '{"gpt-4o":"gpt-4o-2024-11-20"}',
    });
    await db()
      .update(channels)
      .set({ usedQuota: 12345, balance: 8.5, balanceUpdatedTime: 1700000000, responseTime: 900, testTime: 1 })
      .where(eq(channels.id, source!.id));
    events.length = 0;

    const copied = await post(`/api/channel/copy/${source!.id}`);
    expect(copied.json()).toMatchObject({
      success: true,
      data: {
        name: 'primary_copy',
        key: '',
        models: 'gpt-4o,gpt-4o-mini',
        group: 'default,vip',
        priority: 4,
        weight: 9,
        tag: 'team',
        model_mapping: '{"gpt-4o":"gpt-4o-2024-11-20"}',
        used_quota: 0,
        balance: 0,
        response_time: 0,
      },
    });
    const copyId = copied.json().data.id as number;
    expect(copyId).not.toBe(source!.id);
    // the copy works at once: the same key (without the admin typing it again) and its own routing rows
    const box = createChannelKeyBox(t.config.cryptoSecret);
    const [row] = await db().select().from(channels).where(eq(channels.id, copyId));
    expect(box.open(row!.key)).toBe('sk-good-0002');
    expect(await abilitiesOf(copyId)).toHaveLength(4);
    expect(events).toContainEqual({ type: 'channels.changed', ids: [copyId] });

    const named = await post(`/api/channel/copy/${source!.id}`, { suffix: ' (2)', reset_balance: false });
    expect(named.json().data).toMatchObject({ name: 'primary (2)', balance: 8.5, used_quota: 0 });

    expect((await post('/api/channel/copy/424242')).statusCode).toBe(404);
    expect((await post(`/api/channel/copy/${source!.id}`, { suffix: 5 })).json()).toMatchObject({
      success: false,
      message: 'suffix must be text',
    });
    expect(await channelCount()).toBe(3);
  });

  it('deletes one, the disabled ones and a batch, dropping their abilities', async () => {
    const [a] = await create({ name: 'a' });
    const [b] = await create({ name: 'b', status: 2 });
    const [c] = await create({ name: 'c', status: 3 });
    const [d] = await create({ name: 'd' });
    const [e] = await create({ name: 'e' });

    expect((await del(`/api/channel/${a!.id}`)).json().success).toBe(true);
    expect(await abilitiesOf(a!.id)).toEqual([]);
    expect((await del(`/api/channel/${a!.id}`)).statusCode).toBe(404);

    expect((await del('/api/channel/disabled')).json().data).toBe(2);
    expect(await abilitiesOf(b!.id)).toEqual([]);
    expect(await abilitiesOf(c!.id)).toEqual([]);

    expect((await post('/api/channel/batch', { ids: [] })).statusCode).toBe(400);
    expect((await post('/api/channel/batch', { ids: [d!.id, e!.id, 424242] })).json().data).toBe(2);
    expect(await channelCount()).toBe(0);
  });

  it('tags a batch, enables and disables by tag, and edits the tag (blank = no change, blank new tag dissolves)', async () => {
    const [a] = await create({ name: 'a', models: 'gpt-4o' });
    const [b] = await create({ name: 'b', models: 'gpt-4o' });
    expect((await post('/api/channel/batch/tag', { ids: [a!.id, b!.id], tag: '' })).json().message).toMatch(
      /tag cannot be empty/,
    );
    expect((await post('/api/channel/batch/tag', { ids: [a!.id, b!.id], tag: 'team' })).json().data).toBe(2);
    expect((await abilitiesOf(a!.id))[0]!.tag).toBe('team');

    expect((await post('/api/channel/tag/disabled', { tag: 'team' })).json().data).toBe(2);
    expect((await get(`/api/channel/${a!.id}`)).json().data.status).toBe(2);
    expect((await abilitiesOf(b!.id)).every((x) => !x.enabled)).toBe(true);
    expect((await post('/api/channel/tag/enabled', { tag: 'team' })).json().data).toBe(2);
    expect((await abilitiesOf(b!.id)).every((x) => x.enabled)).toBe(true);
    expect((await post('/api/channel/tag/enabled', { tag: 'nobody' })).statusCode).toBe(404);

    expect((await put('/api/channel/tag', { tag: 'team', models: '', priority: '' })).json().message).toMatch(
      /no changes at all/,
    );
    expect((await put('/api/channel/tag', { tag: 'team', model_mapping: '{x' })).statusCode).toBe(400);
    expect((await put('/api/channel/tag', { tag: 'team', weight: -1 })).json().message).toMatch(
      /non-negative/,
    );

    const edit = await put('/api/channel/tag', {
      tag: 'team',
      models: 'gpt-4o-mini',
      groups: ['default', 'vip'],
      priority: 9,
      model_mapping: '',
    });
    expect(edit.json().data).toBe(2);
    const afterEdit = (await get(`/api/channel/${a!.id}`)).json().data;
    expect(afterEdit).toMatchObject({
      models: 'gpt-4o-mini',
      group: 'default,vip',
      priority: 9,
      tag: 'team',
    });
    expect((await abilitiesOf(a!.id)).map((x) => `${x.group}/${x.model}/${x.priority}`).sort()).toEqual([
      'default/gpt-4o-mini/9',
      'vip/gpt-4o-mini/9',
    ]);

    await put('/api/channel/tag', { tag: 'team', new_tag: 'crew' });
    expect((await get(`/api/channel/${b!.id}`)).json().data.tag).toBe('crew');
    await put('/api/channel/tag', { tag: 'crew', new_tag: '' });
    expect((await get(`/api/channel/${b!.id}`)).json().data.tag).toBe('');
    expect((await abilitiesOf(b!.id))[0]!.tag).toBeNull();
  });

  it('fixes abilities: rebuilds missing rows and drops orphans, answering the count', async () => {
    const [a] = await create({ models: 'gpt-4o,gpt-4o-mini' });
    await create({ name: 'second' });
    await db().delete(abilities).where(eq(abilities.channelId, a!.id));
    await db().insert(abilities).values({ group: 'default', model: 'ghost', channelId: 987654 });
    const fixed = await post('/api/channel/fix');
    expect(fixed.json()).toMatchObject({ success: true, data: 2 });
    expect(await abilitiesOf(a!.id)).toHaveLength(2);
    expect(await abilitiesOf(987654)).toEqual([]);
  });

  it('serves the model catalogue and the per-type default models', async () => {
    const catalogue = (await get('/api/channel/models')).json().data;
    expect(catalogue).toContainEqual(
      expect.objectContaining({ id: 'gpt-4o', object: 'model', owned_by: 'OpenAI' }),
    );
    const user = await registerUser(t.app, 'modelsuser');
    const defaults = (await user.get('/api/models')).json().data;
    expect(defaults['1']).toContain('gpt-4o');
    expect(defaults['14']).toContain('claude-3-5-sonnet-20241022');
    expect((await new ConsoleClient(t.app).get('/api/models')).statusCode).toBe(401);
  });

  it("fetches the upstream's model list with the first key line, or with a stored channel's key", async () => {
    const posted = await post('/api/channel/fetch_models', {
      type: 1,
      base_url: upstream.url,
      key: 'sk-good-0001\nsk-good-0002',
    });
    expect(posted.json()).toMatchObject({ success: true, data: ['gpt-4o', 'gpt-4o-mini'] });
    expect(upstream.seen.at(-1)).toEqual({ path: '/v1/models', auth: 'Bearer sk-good-0001' });

    const gemini = await post('/api/channel/fetch_models', {
      type: 24,
      base_url: upstream.url,
      key: 'sk-good-0001',
    });
    expect(gemini.json().data).toEqual(['gemini-2.0-flash']);

    expect(
      (await post('/api/channel/fetch_models', { type: 1, base_url: upstream.url, key: '' })).json().message,
    ).toMatch(/please fill in the key/);
    const rejected = await post('/api/channel/fetch_models', {
      type: 1,
      base_url: upstream.url,
      key: 'bad-key',
    });
    expect(rejected.statusCode).toBe(502);
    expect(rejected.json().message).toBe('the upstream answered HTTP 401');

    const [c] = await create({ base_url: upstream.url, key: 'sk-good-0003' });
    const stored = await get(`/api/channel/fetch_models/${c!.id}`);
    expect(stored.json().data).toEqual(['gpt-4o', 'gpt-4o-mini']);
    expect(upstream.seen.at(-1)!.auth).toBe('Bearer sk-good-0003');
  });

  it("fetches a stored channel's models and balance through its outbound proxy (setting.proxy)", async () => {
    const proxy = await startHttpProxy();
    try {
      const [c] = await create({
        base_url: upstream.url,
        key: 'sk-good-0004',
        setting: JSON.stringify({ proxy: proxy.url }),
      });
      const models = await get(`/api/channel/fetch_models/${c!.id}`);
      expect(models.json()).toMatchObject({ success: true, data: ['gpt-4o', 'gpt-4o-mini'] });
      const balance = await get(`/api/channel/update_balance/${c!.id}`);
      expect(balance.json()).toMatchObject({ success: true, balance: 74.5 });
      // One model list and the two billing calls of the balance, each carried by the proxy.
      const target = upstream.url.replace('http://', '');
      expect(proxy.targets).toEqual([target, target, target]);
    } finally {
      await proxy.close();
    }
  });

  it('updates balances for the providers that publish one and says so for the others', async () => {
    const [openai] = await create({ base_url: upstream.url, key: 'sk-good-0001' });
    const [silicon] = await create({ type: 40, base_url: upstream.url, key: 'sk-silicon' });
    const [deepseek] = await create({ type: 43, base_url: upstream.url, key: 'sk-deepseek' });
    const [claude] = await create({ type: 14, base_url: upstream.url, key: 'sk-good-0002' });

    const one = await get(`/api/channel/update_balance/${openai!.id}`);
    expect(one.json()).toMatchObject({ success: true, balance: 74.5, data: { balance: 74.5 } });
    expect((await get(`/api/channel/${openai!.id}`)).json().data.balance).toBe(74.5);
    expect((await get(`/api/channel/update_balance/${silicon!.id}`)).json().balance).toBe(12.5);
    expect((await get(`/api/channel/update_balance/${deepseek!.id}`)).json().balance).toBe(110);
    const unsupported = await get(`/api/channel/update_balance/${claude!.id}`);
    expect(unsupported.statusCode).toBe(400);
    expect(unsupported.json().message).toMatch(/not supported for Anthropic Claude/);

    const [empty] = await create({ base_url: upstream.url, key: 'sk-zero-balance' });
    const all = await get('/api/channel/update_balance');
    expect(all.json().data).toEqual({ updated: 4, failed: 0, disabled: 1 });
    const emptied = (await get(`/api/channel/${empty!.id}`)).json().data;
    expect(emptied).toMatchObject({ status: 3, balance: 0 });
    expect(JSON.parse(emptied.other_info).status_reason).toBe('balance exhausted');
    expect((await abilitiesOf(empty!.id)).every((a) => !a.enabled)).toBe(true);
  });

  it('never returns a channel key in any response', () => {
    expect(bodies.length).toBeGreaterThan(50);
    for (const body of bodies) for (const key of SECRET_KEYS) expect(body).not.toContain(key);
  });
});
