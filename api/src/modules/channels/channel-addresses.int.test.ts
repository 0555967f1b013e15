/**
 * Addresses a non-root administrator gives a channel are checked against root's outbound policy (docs/adr/0039):
 * an administrator must not make the gateway call its own network (the cloud metadata address, a private service,
 * itself) and read the answer through "fetch models", a channel test or a relay call. The blocked ranges are
 * IANA's special-purpose registries (https://www.iana.org/assignments/iana-ipv4-special-registry): 127.0.0.0/8
 * loopback, 169.254.0.0/16 link-local (169.254.169.254 is the metadata address of AWS, GCP and Azure), 10.0.0.0/8
 * private (RFC 1918); `::ffff:10.0.0.1` is the IPv4-mapped form of 10.0.0.1 (RFC 4291 section 2.5.5.2).
 * Names resolve through the test's own resolver; the listener on 127.0.0.1 counts the connections it accepts.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ResolveHost } from '@turnpike/core/net/guarded-fetch';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ConsoleClient, createTestApp, saveOption, setupRoot, type TestApp } from '../../testing/test-app.ts';

/** What each name answers, lookup after lookup (the last answer repeats); an unknown name does not resolve. */
const DNS: Record<string, string[][]> = {
  'models.internal.test': [['10.0.0.5']],
  'mixed.internal.test': [['8.8.8.8', '10.0.0.5']],
  'public.upstream.test': [['8.8.8.8']],
  'loopback.upstream.test': [['127.0.0.1']],
  // Answers a public address to the first lookup and loopback to every later one (DNS rebinding).
  'rebinding.upstream.test': [['8.8.8.8'], ['127.0.0.1']],
};
const lookups = new Map<string, number>();
const resolveHost: ResolveHost = async (hostname) => {
  const answers = DNS[hostname];
  if (!answers) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
  const count = lookups.get(hostname) ?? 0;
  lookups.set(hostname, count + 1);
  const answer = answers[Math.min(count, answers.length - 1)] ?? [];
  return answer.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
};

const HINT = 'the root user can allow its range in System settings → Requests to user addresses';
const INTERNAL = `base_url points to a private or internal address; ${HINT}`;
const NOT_PUBLIC = `base_url does not resolve to a public address (it points to a private or internal address, or does not resolve); ${HINT}`;

let t: TestApp;
let root: ConsoleClient;
let admin: ConsoleClient;
let inside: Server;
let connections = 0;
const hostsSeen: string[] = [];

beforeAll(async () => {
  t = await createTestApp({ resolveHost });
  root = await setupRoot(t.app);
  const created = await root.post('/api/user/', { username: 'ops', password: 'ops-pass-123' });
  await root.post('/api/user/manage', { id: created.json().data.id, action: 'promote' });
  admin = new ConsoleClient(t.app);
  expect((await admin.login('ops', 'ops-pass-123')).json().success).toBe(true);
  // An internal service that would answer a model list in OpenAI's shape
  // (https://platform.openai.com/docs/api-reference/models/list) to anyone who reached it.
  inside = createServer((req, res) => {
    hostsSeen.push(req.headers.host ?? '');
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ object: 'list', data: [{ id: 'internal-secret-model', object: 'model' }] }));
  });
  inside.on('connection', () => {
    connections += 1;
  });
  await new Promise<void>((resolve) => inside.listen(0, '127.0.0.1', resolve));
});

afterAll(async () => {
  inside?.closeAllConnections();
  await new Promise((resolve) => inside?.close(resolve));
  await t?.close();
});

afterEach(async () => {
  await saveOption(root, 'fetch_setting.allowed_ranges', '');
  await saveOption(root, 'fetch_setting.enable_ssrf_protection', 'true');
});

const port = () => (inside.address() as AddressInfo).port;
const channel = (base_url: string, extra: Record<string, unknown> = {}) => ({
  name: `at ${base_url}`,
  type: 1,
  key: 'sk-admin-0001',
  models: 'gpt-4o',
  base_url,
  ...extra,
});
/** The channels every administrator sees, by id and address. */
const listed = async () =>
  (
    (await root.get('/api/channel/?p=1&page_size=100')).json().data.items as {
      id: number;
      base_url: string;
    }[]
  )
    .map((c) => `${c.id} ${c.base_url}`)
    .sort();

/** Saves a channel at each inside address the first test refuses, expecting each to be saved as typed. */
async function expectInsideChannelsSaved(client: ConsoleClient): Promise<void> {
  for (const url of [
    `http://127.0.0.1:${port()}`,
    'http://169.254.169.254/latest/meta-data',
    'http://[::ffff:10.0.0.1]',
    'http://models.internal.test',
  ]) {
    const answer = await client.post('/api/channel/', channel(url));
    expect(answer.json(), url).toMatchObject({ success: true, data: [{ base_url: url }] });
  }
}

describe("a non-root administrator's channel addresses", () => {
  it("refuses a channel aimed inside the gateway's network and saves nothing", async () => {
    const before = await listed();
    const refusals: [string, string][] = [
      [`http://127.0.0.1:${port()}`, INTERNAL],
      ['http://169.254.169.254/latest/meta-data', INTERNAL],
      ['http://[::ffff:10.0.0.1]', INTERNAL],
      ['http://models.internal.test', NOT_PUBLIC],
      ['http://mixed.internal.test', NOT_PUBLIC],
      ['http://nowhere.internal.test', NOT_PUBLIC],
      [
        `http://localhost:${port()}`,
        `base_url names this server (localhost); write its address instead, and ${HINT}`,
      ],
    ];
    for (const [url, message] of refusals) {
      const answer = await admin.post('/api/channel/', channel(url));
      expect(answer.statusCode, url).toBe(400);
      expect(answer.json(), url).toMatchObject({ success: false, message });
    }
    const viaProxy = await admin.post(
      '/api/channel/',
      channel('http://public.upstream.test', {
        setting: JSON.stringify({ proxy: 'socks5://10.0.0.9:1080' }),
      }),
    );
    expect(viaProxy.json()).toMatchObject({
      success: false,
      message: `setting.proxy points to a private or internal address; ${HINT}`,
    });
    expect(await listed()).toEqual(before);
    expect(connections).toBe(0);
  });

  it('saves a channel at a public address, and at an internal one once root allows its range', async () => {
    const publicChannel = await admin.post('/api/channel/', channel('https://public.upstream.test'));
    expect(publicChannel.json()).toMatchObject({ success: true });

    await saveOption(root, 'fetch_setting.allowed_ranges', '10.0.0.0/8\n169.254.169.254\n127.0.0.0/8');
    await expectInsideChannelsSaved(admin);
    // Allowing 169.254.169.254 alone leaves the rest of link-local refused.
    expect((await admin.post('/api/channel/', channel('http://169.254.1.1'))).json()).toMatchObject({
      success: false,
      message: INTERNAL,
    });
    // Root may switch the protection off altogether.
    await saveOption(root, 'fetch_setting.enable_ssrf_protection', 'false');
    expect((await admin.post('/api/channel/', channel('http://169.254.1.1'))).json()).toMatchObject({
      success: true,
    });
  });

  it('lets root save the same channels without any setting', async () => {
    await expectInsideChannelsSaved(root);
  });

  it("lets an administrator edit a root-made internal channel's other fields, not point it elsewhere inside", async () => {
    const made = await root.post(
      '/api/channel/',
      channel('http://10.0.0.3:8080', { setting: JSON.stringify({ proxy: 'http://10.0.0.9:3128' }) }),
    );
    const id = made.json().data[0].id as number;
    const renamed = await admin.put('/api/channel/', { id, name: 'renamed by ops', priority: 5 });
    expect(renamed.json()).toMatchObject({ success: true, data: { name: 'renamed by ops', priority: 5 } });
    // The console sends the whole form: the unchanged address and proxy come along and are not judged again.
    const wholeForm = await admin.put('/api/channel/', {
      id,
      name: 'renamed twice',
      base_url: 'http://10.0.0.3:8080',
      setting: JSON.stringify({ proxy: 'http://10.0.0.9:3128' }),
    });
    expect(wholeForm.json()).toMatchObject({ success: true, data: { name: 'renamed twice' } });

    const moved = await admin.put('/api/channel/', { id, name: 'moved', base_url: 'http://10.0.0.4:8080' });
    expect(moved.json()).toMatchObject({ success: false, message: INTERNAL });
    const proxied = await admin.put('/api/channel/', {
      id,
      setting: JSON.stringify({ proxy: 'http://10.0.0.10:3128' }),
    });
    expect(proxied.json()).toMatchObject({ success: false });
    expect((await root.get(`/api/channel/${id}`)).json().data).toMatchObject({
      name: 'renamed twice',
      base_url: 'http://10.0.0.3:8080',
      setting: JSON.stringify({ proxy: 'http://10.0.0.9:3128' }),
    });
  });
});

describe("a non-root administrator's model list at an unsaved address", () => {
  const fetchModels = (client: ConsoleClient, base_url: string) =>
    client.post('/api/channel/fetch_models', { type: 1, base_url, key: 'sk-admin-0001' });

  it('refuses an internal address before any connection is made', async () => {
    const start = connections;
    for (const [url, message] of [
      [`http://127.0.0.1:${port()}`, INTERNAL],
      [`http://[::ffff:127.0.0.1]:${port()}`, INTERNAL],
      [`http://loopback.upstream.test:${port()}`, NOT_PUBLIC],
    ] as const) {
      const answer = await fetchModels(admin, url);
      expect(answer.json(), url).toMatchObject({ success: false, message });
    }
    expect(connections).toBe(start);
  });

  it('does not connect inside when the name answers the call differently from the check', async () => {
    const start = connections;
    lookups.delete('rebinding.upstream.test');
    const answer = await fetchModels(admin, `http://rebinding.upstream.test:${port()}`);
    expect(answer.json().success).toBe(false);
    expect(answer.body).not.toContain('internal-secret-model');
    expect(lookups.get('rebinding.upstream.test')).toBeGreaterThanOrEqual(2);
    expect(connections).toBe(start);
  });

  it('reaches the address once root allows its range, or for root itself', async () => {
    const viaRoot = await fetchModels(root, `http://127.0.0.1:${port()}`);
    expect(viaRoot.json()).toMatchObject({ success: true, data: ['internal-secret-model'] });

    await saveOption(root, 'fetch_setting.allowed_ranges', '127.0.0.0/8');
    const seen = hostsSeen.length;
    const viaName = await fetchModels(admin, `http://loopback.upstream.test:${port()}`);
    expect(viaName.json()).toMatchObject({ success: true, data: ['internal-secret-model'] });
    // Connected to the checked address; the request still names the host the administrator typed.
    expect(hostsSeen.slice(seen)).toEqual([`loopback.upstream.test:${port()}`]);
  });
});
