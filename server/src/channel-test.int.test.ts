import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { abilities, channels, logs, users } from '@turnpike/core/db/schema/index';
import type { GatewayEvent } from '@turnpike/core/events/bus';
import { type FakeOpenAi, startFakeOpenAi } from '@turnpike/relay/testing/fake-openai';
import { sleep, waitFor } from '@turnpike/relay/testing/wait';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ConsoleClient,
  createTestApp,
  createTestDatabaseUrl,
  registerUser,
  setupRoot,
  type TestApp,
} from './testing/test-app.ts';

const GOOD_KEY = 'sk-upstream-good';

/** Creates channels through the console API, as an administrator does. */
async function createChannel(client: ConsoleClient, fields: Record<string, unknown>): Promise<number> {
  const response = await client.post('/api/channel/', {
    name: 'test channel',
    type: 1,
    group: 'default',
    ...fields,
  });
  if (!response.json().success) throw new Error(`create failed: ${response.body}`);
  return response.json().data[0].id;
}

/**
 * An upstream in front of `target` that holds every request until `open()` is called, then passes it on and
 * sends back the target's answer as it came (status, content type, body).
 */
async function startGate(target: string) {
  let open: () => void = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  const gate = { held: 0, passed: 0 };
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    gate.held += 1;
    await opened;
    const answer = await fetch(`${target}${req.url}`, {
      method: req.method,
      headers: {
        authorization: req.headers.authorization ?? '',
        'content-type': req.headers['content-type'] ?? 'application/json',
      },
      body: Buffer.concat(chunks),
    });
    const body = Buffer.from(await answer.arrayBuffer());
    gate.passed += 1;
    res.writeHead(answer.status, {
      'content-type': answer.headers.get('content-type') ?? 'application/json',
    });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get held() {
      return gate.held;
    },
    get passed() {
      return gate.passed;
    },
    open: () => open(),
    async close() {
      open();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const lastRequest = (fake: FakeOpenAi) => fake.requests[fake.requests.length - 1];

describe('channel tests', () => {
  let t: TestApp;
  let root: ConsoleClient;
  let member: ConsoleClient;
  let fake: FakeOpenAi;
  const events: GatewayEvent[] = [];
  /** Channels whose test fails (revoked key, upstream gone): a run over every channel counts them. */
  const failing = new Set<number>();

  const db = () => t.runtime.deps.db;
  const options = () => t.runtime.deps.options;
  const channelRow = async (id: number) =>
    (await db().select().from(channels).where(eq(channels.id, id)))[0]!;
  const abilitiesEnabled = async (id: number) =>
    (await db().select().from(abilities).where(eq(abilities.channelId, id))).map((a) => a.enabled);
  const testChannel = (id: number, model?: string) =>
    root.get(`/api/channel/test/${id}${model ? `?model=${encodeURIComponent(model)}` : ''}`);

  beforeAll(async () => {
    fake = await startFakeOpenAi({ apiKey: GOOD_KEY, headersDelayMs: 20 });
    t = await createTestApp({ env: { GLOBAL_API_RATE_LIMIT: '100000' } });
    root = await setupRoot(t.app);
    member = await registerUser(t.app, 'member');
    await options().set(
      'ModelRatio',
      JSON.stringify({ 'gpt-4o-mini': 1.5, 'gpt-4o': 2.5, 'text-embedding-3-small': 0.01 }),
    );
    t.runtime.deps.bus.subscribe((event) => events.push(event));
  });
  afterAll(async () => {
    await t?.close();
    await fake?.close();
  });

  it('tests a channel: answers the time, stores the response time and logs the cost without charging anyone', async () => {
    const id = await createChannel(root, {
      key: GOOD_KEY,
      base_url: fake.url,
      models: 'gpt-4o-mini,gpt-4o',
      model_mapping: JSON.stringify({ 'gpt-4o-mini': 'gpt-4o-mini-2024-07-18' }),
    });
    const [before] = await db().select().from(users).where(eq(users.username, 'root'));
    const startedAt = Math.floor(Date.now() / 1000);

    const response = await testChannel(id);
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body).toMatchObject({ success: true });
    expect(typeof body.time).toBe('number');
    expect(body.time).toBeGreaterThanOrEqual(0.02);

    // The first model of the channel, mapped, as a tiny non-stream chat with the channel's key.
    const sent = lastRequest(fake)!;
    expect(sent.path).toBe('/v1/chat/completions');
    expect(sent.headers.authorization).toBe(`Bearer ${GOOD_KEY}`);
    expect(sent.body).toMatchObject({
      model: 'gpt-4o-mini-2024-07-18',
      messages: [{ role: 'user', content: 'hi' }],
      stream: false,
      max_tokens: 10,
    });

    const row = await channelRow(id);
    expect(row.responseTime).toBeGreaterThanOrEqual(20);
    expect(row.responseTime).toBe(Math.round(body.time * 1000));
    expect(row.testTime).toBeGreaterThanOrEqual(startedAt);
    expect(row.usedQuota).toBe(0);

    const [log] = await db()
      .select()
      .from(logs)
      .where(and(eq(logs.channelId, id), eq(logs.tokenName, 'model test')));
    expect(log).toBeDefined();
    expect(log).toMatchObject({ type: 2, modelName: 'gpt-4o-mini', username: 'root', userId: before!.id });
    expect(log!.promptTokens).toBeGreaterThan(0);
    expect(log!.completionTokens).toBeGreaterThan(0);
    // gpt-4o* completion ratio is 4: round((prompt + completion × 4) × 1.5).
    expect(log!.quota).toBe(Math.round((log!.promptTokens + log!.completionTokens * 4) * 1.5));
    expect(JSON.parse(log!.other)).toMatchObject({
      is_model_mapped: true,
      upstream_model_name: 'gpt-4o-mini-2024-07-18',
      admin_info: { use_channel: [String(id)] },
    });

    // Nobody paid for it.
    const [after] = await db().select().from(users).where(eq(users.id, before!.id));
    expect(after!.quota).toBe(before!.quota);
    expect(after!.usedQuota).toBe(before!.usedQuota);
    expect(after!.requestCount).toBe(before!.requestCount);
  });

  it("prices a test log at the root user's group price, and at the price without groups for the default group", async () => {
    await options().set('GroupRatio', JSON.stringify({ default: 1, vip: 2 }));
    await options().set('GroupModelRatio', JSON.stringify({ vip: { 'gpt-4o': 4 } }));
    await options().set('GroupCompletionRatio', JSON.stringify({ vip: { 'gpt-4o': 2 } }));
    const [rootRow] = await db().select().from(users).where(eq(users.username, 'root'));
    const logOf = async (id: number) => {
      const [log] = await db()
        .select()
        .from(logs)
        .where(and(eq(logs.channelId, id), eq(logs.tokenName, 'model test')));
      return { ...log!, other: JSON.parse(log!.other) as Record<string, unknown> };
    };
    try {
      await db().update(users).set({ group: 'vip' }).where(eq(users.id, rootRow!.id));
      const vipChannel = await createChannel(root, { key: GOOD_KEY, base_url: fake.url, models: 'gpt-4o' });
      expect((await testChannel(vipChannel)).json().success).toBe(true);
      const vip = await logOf(vipChannel);
      // vip's own ratio 4 and completion ratio 2, GroupRatio (2) not applied.
      expect(vip.quota).toBe(Math.round((vip.promptTokens + vip.completionTokens * 2) * 4));
      expect(vip.other).toMatchObject({ model_ratio: 4, completion_ratio: 2, group_ratio: 1 });

      await db().update(users).set({ group: 'default' }).where(eq(users.id, rootRow!.id));
      const plainChannel = await createChannel(root, { key: GOOD_KEY, base_url: fake.url, models: 'gpt-4o' });
      expect((await testChannel(plainChannel)).json().success).toBe(true);
      const plain = await logOf(plainChannel);
      expect(plain.quota).toBe(Math.round((plain.promptTokens + plain.completionTokens * 4) * 2.5));
      expect(plain.other).toMatchObject({ model_ratio: 2.5, completion_ratio: 4, group_ratio: 1 });
    } finally {
      await db().update(users).set({ group: rootRow!.group }).where(eq(users.id, rootRow!.id));
    }
  });

  it('tests the model asked for, else the test model, and embedding models on /v1/embeddings', async () => {
    const id = await createChannel(root, {
      key: GOOD_KEY,
      base_url: fake.url,
      models: 'gpt-4o-mini,gpt-4o,text-embedding-3-small',
      test_model: 'gpt-4o',
    });
    expect((await testChannel(id)).json().success).toBe(true);
    expect(lastRequest(fake)).toMatchObject({ path: '/v1/chat/completions', body: { model: 'gpt-4o' } });

    const embedding = await testChannel(id, 'text-embedding-3-small');
    expect(embedding.json().success).toBe(true);
    expect(lastRequest(fake)).toMatchObject({
      path: '/v1/embeddings',
      body: { model: 'text-embedding-3-small', input: ['hi'] },
    });
  });

  it('disables a channel whose key is revoked only when AutomaticDisableChannelEnabled is on', async () => {
    const id = await createChannel(root, { key: 'sk-revoked', base_url: fake.url, models: 'gpt-4o-mini' });
    failing.add(id);
    await options().set('AutomaticDisableChannelEnabled', 'false');
    const kept = (await testChannel(id)).json();
    expect(kept.success).toBe(false);
    expect(kept.message).toMatch(/Incorrect API key/);
    expect((await channelRow(id)).status).toBe(1);

    await options().set('AutomaticDisableChannelEnabled', 'true');
    try {
      events.length = 0;
      const disabled = (await testChannel(id)).json();
      expect(disabled.success).toBe(false);
      expect(disabled.message).toMatch(/the channel was disabled/);
      const row = await channelRow(id);
      expect(row.status).toBe(3);
      expect(JSON.parse(row.otherInfo ?? '{}').status_reason).toMatch(/401|invalid_api_key/);
      expect(await abilitiesEnabled(id)).toEqual([false]);
      expect(events).toContainEqual({ type: 'channels.changed', ids: [id] });

      // A channel with auto_ban off is never switched off by a test.
      const spared = await createChannel(root, {
        key: 'sk-revoked',
        base_url: fake.url,
        models: 'gpt-4o-mini',
        auto_ban: 0,
      });
      failing.add(spared);
      expect((await testChannel(spared)).json().success).toBe(false);
      expect((await channelRow(spared)).status).toBe(1);
    } finally {
      await options().set('AutomaticDisableChannelEnabled', 'false');
    }
  });

  it('disables a channel that answers slower than ChannelDisableThreshold', async () => {
    const slow = await startFakeOpenAi({ apiKey: GOOD_KEY, headersDelayMs: 400 });
    try {
      const id = await createChannel(root, { key: GOOD_KEY, base_url: slow.url, models: 'gpt-4o-mini' });
      failing.add(id); // its upstream is closed at the end of this test
      await options().set('ChannelDisableThreshold', '0.2');
      // Without AutomaticDisableChannelEnabled a slow answer is still an answer: said, not acted on.
      const said = (await testChannel(id)).json();
      expect(said.success).toBe(true);
      expect(said.message).toMatch(/over the threshold of 0.2 s/);
      expect((await channelRow(id)).status).toBe(1);

      await options().set('AutomaticDisableChannelEnabled', 'true');
      const response = (await testChannel(id)).json();
      expect(response.success).toBe(false);
      expect(response.time).toBeGreaterThanOrEqual(0.4);
      expect(response.message).toMatch(/over the threshold of 0.2 s.*disabled/);
      const row = await channelRow(id);
      expect(row.status).toBe(3);
      expect(row.responseTime).toBeGreaterThanOrEqual(400);
    } finally {
      await options().setMany([
        ['ChannelDisableThreshold', '5'],
        ['AutomaticDisableChannelEnabled', 'false'],
      ]);
      await slow.close();
    }
  });

  it('re-enables an automatically disabled channel after a good test when AutomaticEnableChannelEnabled is on', async () => {
    const auto = await createChannel(root, { key: GOOD_KEY, base_url: fake.url, models: 'gpt-4o-mini' });
    const manual = await createChannel(root, { key: GOOD_KEY, base_url: fake.url, models: 'gpt-4o-mini' });
    await root.put('/api/channel/', { id: auto, status: 3 });
    await root.put('/api/channel/', { id: manual, status: 2 });

    expect((await testChannel(auto)).json().success).toBe(true);
    expect((await channelRow(auto)).status).toBe(3); // the option is off

    await options().set('AutomaticEnableChannelEnabled', 'true');
    try {
      events.length = 0;
      const enabled = (await testChannel(auto)).json();
      expect(enabled).toMatchObject({ success: true, message: 'the channel was enabled again' });
      expect((await channelRow(auto)).status).toBe(1);
      expect(await abilitiesEnabled(auto)).toEqual([true]);
      expect(events).toContainEqual({ type: 'channels.changed', ids: [auto] });

      // Disabled by hand: a test never turns it back on.
      expect((await testChannel(manual)).json().success).toBe(true);
      expect((await channelRow(manual)).status).toBe(2);
    } finally {
      await options().set('AutomaticEnableChannelEnabled', 'false');
    }
  });

  it('answers a clear failure for Midjourney and Suno channels, and 404 for an unknown channel', async () => {
    const mj = await createChannel(root, {
      type: 2,
      key: 'mj-key',
      base_url: fake.url,
      models: 'mj_imagine',
    });
    const requests = fake.requests.length;
    const response = (await testChannel(mj)).json();
    expect(response).toMatchObject({ success: false, time: 0 });
    expect(response.message).toMatch(/Midjourney channels cannot be tested/);
    expect(fake.requests.length).toBe(requests);

    const missing = await testChannel(999_999);
    expect(missing.statusCode).toBe(404);
    expect(missing.json().success).toBe(false);
  });

  it('refuses non-administrators with the console permission error', async () => {
    for (const url of ['/api/channel/test/1', '/api/channel/test', '/api/channel/test/progress']) {
      const refused = await member.get(url);
      expect(refused.statusCode).toBe(403);
      expect(refused.json()).toMatchObject({ success: false, code: 'FORBIDDEN' });
      const visitor = await new ConsoleClient(t.app).get(url);
      expect(visitor.statusCode).toBe(401);
    }
  });

  it('tests every channel in the background with visible progress, refusing a second run meanwhile', async () => {
    const upstream = await startFakeOpenAi({ apiKey: GOOD_KEY });
    // The run's channels answer only when the test says so: "still running" is a fact here, not a race with a clock.
    const gate = await startGate(upstream.url);
    try {
      for (let i = 0; i < 3; i += 1)
        await createChannel(root, { key: GOOD_KEY, base_url: gate.url, models: 'gpt-4o-mini' });
      const all = await db().select().from(channels);
      // Channels switched off by hand and Midjourney/Suno channels are not part of a run.
      const expected = all.filter((c) => c.status !== 2 && c.type !== 2);
      const expectedFailures = expected.filter((c) => failing.has(c.id)).length;
      expect(expectedFailures).toBe(3);

      // Answered while no gated channel has answered: the run is not awaited.
      const start = await root.get('/api/channel/test');
      expect(start.statusCode).toBe(200);
      expect(start.json().success).toBe(true);
      expect(gate.passed).toBe(0);

      const second = await root.get('/api/channel/test');
      expect(second.statusCode).toBe(409);
      expect(second.json()).toMatchObject({ success: false, code: 'CONFLICT' });
      expect(second.json().message).toMatch(/already running/);

      // The run has reached a gated channel and waits there.
      await waitFor(() => (gate.held > 0 ? true : undefined), 20_000);
      const during = (await root.get('/api/channel/test/progress')).json();
      expect(during.success).toBe(true);
      expect(during.data).toMatchObject({ running: true, total: expected.length });
      expect(during.data.done).toBeLessThan(expected.length);
      expect(during.data.started_at).toBeGreaterThan(0);

      gate.open();
      const finished = await waitFor(async () => {
        const progress = (await root.get('/api/channel/test/progress')).json().data;
        return progress.running ? undefined : progress;
      }, 20_000);
      expect(finished.done).toBe(expected.length);
      expect(finished.finished_at).toBeGreaterThanOrEqual(finished.started_at);
      // The revoked keys and the vanished upstream fail; every other channel answers.
      expect(finished.failed).toBe(expectedFailures);
      // Each gated channel was tested once by the run.
      expect(upstream.requests.filter((r) => r.path === '/v1/chat/completions')).toHaveLength(3);
      expect(gate.passed).toBe(3);

      // Once it is over, a new run may start.
      expect((await root.get('/api/channel/test')).json().success).toBe(true);
      await waitFor(
        async () => ((await root.get('/api/channel/test/progress')).json().data.running ? undefined : true),
        20_000,
      );
    } finally {
      await gate.close();
      await upstream.close();
    }
  });
});

describe('periodic channel tests', () => {
  it('run every CHANNEL_TEST_FREQUENCY minutes, pause POLLING_INTERVAL between channels, and stop on close', async () => {
    const fake = await startFakeOpenAi({ apiKey: GOOD_KEY });
    // 0.005 minutes = 300 ms between rounds; 0.1 s between channels.
    const t = await createTestApp({ env: { CHANNEL_TEST_FREQUENCY: '0.005', POLLING_INTERVAL: '0.1' } });
    let closed = false;
    try {
      const root = await setupRoot(t.app);
      await createChannel(root, { key: GOOD_KEY, base_url: fake.url, models: 'gpt-4o-mini' });
      await createChannel(root, { key: GOOD_KEY, base_url: fake.url, models: 'gpt-4o-mini' });
      const seenAt: number[] = [];
      await waitFor(() => {
        while (seenAt.length < fake.requests.length) seenAt.push(performance.now());
        return fake.requests.length >= 4 ? true : undefined;
      });
      // Two rounds of two channels, the second channel of a round at least the pause after the first.
      expect(seenAt[1]! - seenAt[0]!).toBeGreaterThanOrEqual(80);
      const rows = await t.runtime.deps.db.select().from(channels);
      for (const row of rows) expect(row.testTime).toBeGreaterThan(0);

      await t.close();
      closed = true;
      const after = fake.requests.length;
      await sleep(700);
      expect(fake.requests.length).toBe(after);
    } finally {
      if (!closed) await t.close();
      await fake.close();
    }
  });
});

/** Two API replicas on one Postgres and one Redis, as on Kubernetes. Needs TEST_POSTGRES_URL and TEST_REDIS_URL. */
const shared = Boolean(process.env.TEST_POSTGRES_URL && process.env.TEST_REDIS_URL);

describe.skipIf(!shared)('a test of all channels across replicas', () => {
  it('runs on one replica at a time, with its progress visible on the other', async () => {
    const upstream = await startFakeOpenAi({ apiKey: GOOD_KEY });
    // Held until the other replica has seen the run: no race with a clock.
    const gate = await startGate(upstream.url);
    const database = await createTestDatabaseUrl();
    const prefix = `turnpike-test:channel-test-${Date.now()}:`;
    const a = await createTestApp({ databaseUrl: database.url!, redisKeyPrefix: prefix });
    const b = await createTestApp({ databaseUrl: database.url!, redisKeyPrefix: prefix });
    try {
      const onA = await setupRoot(a.app);
      const onB = new ConsoleClient(b.app);
      onB.cookie = onA.cookie;
      onB.userId = onA.userId;
      for (let i = 0; i < 3; i += 1)
        await createChannel(onA, { key: GOOD_KEY, base_url: gate.url, models: 'gpt-4o-mini' });

      expect((await onA.get('/api/channel/test')).json().success).toBe(true);
      const refused = await onB.get('/api/channel/test');
      expect(refused.statusCode).toBe(409);
      expect(refused.json().message).toMatch(/already running/);
      expect((await onB.get('/api/channel/test/progress')).json().data).toMatchObject({
        running: true,
        total: 3,
      });

      gate.open();
      const finished = await waitFor(async () => {
        const progress = (await onB.get('/api/channel/test/progress')).json().data;
        return progress.running ? undefined : progress;
      }, 20_000);
      expect(finished).toMatchObject({ done: 3, total: 3, failed: 0 });
      // The lease is free again: the other replica may start the next run.
      expect((await onB.get('/api/channel/test')).json().success).toBe(true);
      await waitFor(
        async () => ((await onA.get('/api/channel/test/progress')).json().data.running ? undefined : true),
        20_000,
      );
    } finally {
      await a.close();
      await b.close();
      await database.drop();
      await gate.close();
      await upstream.close();
    }
  });
});
