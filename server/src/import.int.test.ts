import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildApp } from '@turnpike/api';
import { createChannelKeyBox } from '@turnpike/core/channels/channel-key';
import { channels, logs, tokens, users } from '@turnpike/core/db/schema/index';
import { generateTokenKey } from '@turnpike/core/domain/tokens';
import { importGateway } from '@turnpike/core/import/importer';
import { openSource } from '@turnpike/core/import/source';
import {
  ALICE_KEY,
  createReferenceSource,
  NOW,
  PASSWORDS,
  type ReferenceSource,
  SOURCE_KINDS,
} from '@turnpike/core/import/testing/reference-source';
import { createTokenRepo } from '@turnpike/core/repos/token.repo';
import { createUserRepo } from '@turnpike/core/repos/user.repo';
import { registerRelay } from '@turnpike/relay';
import { type FakeOpenAi, startFakeOpenAi } from '@turnpike/relay/testing/fake-openai';
import { waitFor } from '@turnpike/relay/testing/wait';
import { and, eq, gt } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConsoleClient, createTestApp, type TestApp } from './testing/test-app.ts';

const ENV = { CRITICAL_RATE_LIMIT: '10000', GLOBAL_API_RATE_LIMIT: '100000' };
const unavailable = (kind: string) =>
  (kind === 'mysql' && !process.env.TEST_MYSQL_URL) ||
  (kind === 'postgres' && !process.env.TEST_POSTGRES_URL);

/**
 * A new-api gateway moved into Turnpike, then used: its users sign in with their old passwords, an old API key is
 * served by the imported channel and billed against the imported balance, and the old history shows in the console.
 */
describe.each(SOURCE_KINDS)('a gateway moved from new-api on %s', (kind) => {
  if (unavailable(kind)) {
    it.skip(`needs TEST_${kind.toUpperCase()}_URL for a ${kind} source`, () => {});
    return;
  }
  let fake: FakeOpenAi;
  let source: ReferenceSource;
  let t: TestApp;
  let app: FastifyInstance;
  let root: ConsoleClient;
  let alice: ConsoleClient;

  beforeAll(async () => {
    fake = await startFakeOpenAi({ reply: 'moved and working' });
    source = (await createReferenceSource(kind, 'new-api', fake.url))!;
    t = await createTestApp({ env: ENV });
    const reader = await openSource(source.url);
    try {
      await importGateway({
        source: reader,
        db: t.runtime.deps.db,
        box: createChannelKeyBox(t.config.cryptoSecret),
        dryRun: false,
        merge: false,
        skipLogs: false,
      });
    } finally {
      await reader.close();
    }
    await t.runtime.deps.options.load();
    app = await buildApp(t.runtime.deps);
    await registerRelay(app, t.runtime.deps, { flushIntervalMs: 20 });
    await app.ready();
    root = new ConsoleClient(app);
    alice = new ConsoleClient(app);
  });
  afterAll(async () => {
    await app?.close();
    await t?.close();
    await fake?.close();
    await source?.drop();
  });

  it('signs each user in with the password they had', async () => {
    const signedIn = await alice.login('alice', PASSWORDS.alice);
    expect(signedIn.json()).toMatchObject({
      success: true,
      data: { id: 2, username: 'alice', group: 'vip' },
    });
    expect((await root.login('root', PASSWORDS.root)).json().success).toBe(true);
    expect((await new ConsoleClient(app).login('alice', 'not-her-password')).json().success).toBe(false);
    // The soft-deleted user stays deleted.
    expect((await new ConsoleClient(app).login('bob', PASSWORDS.bob)).json().success).toBe(false);
    const self = (await alice.get('/api/user/self')).json().data;
    expect(self).toMatchObject({ quota: 2_000_000, used_quota: 300, request_count: 7, aff_code: 'al1c' });
  });

  it('serves the old key through the imported channel and bills the imported balance', async () => {
    const { db } = t.runtime.deps;
    const response = await app.inject({
      method: 'POST',
      url: '/v1/chat/completions',
      headers: { authorization: `Bearer sk-${ALICE_KEY}`, 'content-type': 'application/json' },
      payload: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'are we there yet?' }] },
    });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json().choices[0].message.content).toBe('moved and working');
    const upstream = fake.requests.at(-1)!;
    expect(upstream.headers.authorization).toBe('Bearer sk-upstream');
    // The channel's header override came along.
    expect(upstream.headers['x-org']).toBe('acme');

    const log = await waitFor(async () => {
      const [row] = await db
        .select()
        .from(logs)
        .where(and(eq(logs.userId, 2), eq(logs.type, 2), gt(logs.id, 3)));
      return row;
    });
    expect(log.quota).toBeGreaterThan(0);
    expect(log).toMatchObject({ channelId: 1, tokenId: 1, modelName: 'gpt-4o-mini', group: 'vip' });
    // Billed at the imported prices: the source's model ratio and the vip group's ratio.
    expect(JSON.parse(log.other)).toMatchObject({ model_ratio: 1.5, group_ratio: 2 });
    const charged = log.quota;
    // Alice's imported plan (a daily allowance, running for years) pays before her wallet; her limited token pays
    // its part either way (docs/adr/0049).
    expect(JSON.parse(log.other)).toMatchObject({ billing_source: 'subscription' });
    await waitFor(async () => {
      const [token] = await db.select().from(tokens).where(eq(tokens.id, 1));
      return token!.remainQuota === 1_000_000 - charged ? token : undefined;
    });
    const [user] = await db.select().from(users).where(eq(users.id, 2));
    expect(user!.quota).toBe(2_000_000);
    const [channel] = await db.select().from(channels).where(eq(channels.id, 1));
    expect(channel!.usedQuota).toBe(12_345 + charged);
    // The new log got an id after the imported ones.
    expect(log.id).toBeGreaterThan(3);
  });

  it('serves calls through the imported multi-key channel with its enabled keys, in turn', async () => {
    const { db } = t.runtime.deps;
    const user = await createUserRepo(db).insert({
      username: 'pool-user',
      password: 'x',
      quota: 100_000_000,
    });
    const token = await createTokenRepo(db).insert({
      userId: user.id,
      key: generateTokenKey(),
      name: 'pool',
      remainQuota: 0,
      unlimitedQuota: true,
    });
    const before = fake.requests.length;
    for (let i = 0; i < 4; i += 1) {
      const response = await app.inject({
        method: 'POST',
        url: '/v1/chat/completions',
        headers: { authorization: `Bearer sk-${token.key}`, 'content-type': 'application/json' },
        payload: { model: 'gpt-4o', messages: [{ role: 'user', content: 'which key?' }] },
      });
      expect(response.statusCode, response.body).toBe(200);
    }
    // Polling over keys 1 and 3; key 2 arrived disabled ("quota exceeded") and is never used.
    const used = fake.requests.slice(before).map((r) => r.headers.authorization);
    expect([...used].sort()).toEqual(['Bearer sk-k1', 'Bearer sk-k1', 'Bearer sk-k3', 'Bearer sk-k3']);
  });

  it('keeps an expired key refused and a model limit in force', async () => {
    const call = (key: string, model: string) =>
      app.inject({
        method: 'POST',
        url: '/v1/chat/completions',
        headers: { authorization: `Bearer sk-${key}`, 'content-type': 'application/json' },
        payload: { model, messages: [{ role: 'user', content: 'hi' }] },
      });
    expect((await call('ZyXwVuTsRqPoNmLkJiHgFeDcBa9876543210zyxwvutsrqpo', 'gpt-4o-mini')).statusCode).toBe(
      401,
    );
    const limited = await call(ALICE_KEY, 'gpt-3.5-turbo');
    expect(limited.statusCode).toBe(403);
  });

  it('shows the old logs and dashboard figures in the console', async () => {
    const page = (await root.get('/api/log/?p=1&page_size=100')).json().data;
    const imported = page.items.filter((row: { id: number }) => row.id <= 3);
    expect(imported.map((row: { id: number }) => row.id).sort()).toEqual([1, 2, 3]);
    const own = (await alice.get('/api/log/self?p=1&page_size=100')).json().data;
    expect(own.items.some((row: { content: string }) => row.content === 'top-up $10')).toBe(true);
    const hour = Math.floor(NOW / 3600) * 3600;
    const dashboard = (
      await alice.get(`/api/data/self?start_timestamp=${hour - 86_400}&end_timestamp=${hour + 3600}`)
    ).json().data as { created_at: number; quota: number; count: number }[];
    expect(dashboard.map((r) => [r.created_at, r.quota, r.count])).toEqual([
      [hour - 7200, 150, 1],
      [hour - 3600, 150, 1],
    ]);
  });
});

describe('the server entry point', () => {
  it('runs the import as a subcommand (the chart Job runs this)', async () => {
    const source = await createReferenceSource('sqlite', 'one-api', 'http://127.0.0.1:9');
    const server = fileURLToPath(new URL('./main.ts', import.meta.url));
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'turnpike-import-entry-'));
    const run = spawnSync(process.execPath, [server, 'import', '--from', source!.url, '--dry-run'], {
      env: { PATH: process.env.PATH ?? '', DATA_DIR: dataDir, LOG_LEVEL: 'silent' },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/dry run: nothing written from sqlite:\/\/.*\(one-api\)/);
    expect(run.stdout).toMatch(/users\s+source 2, would write 2/);
    // A dry run makes no database and no secrets file in the empty DATA_DIR it was pointed at.
    expect(readdirSync(dataDir)).toEqual([]);
  });
});
