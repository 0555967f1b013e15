/**
 * The database or Redis away, at boot and while running, for real `node server/src/main.ts` processes: Postgres
 * "goes away" through a TCP proxy of the test's own (core/src/testing/tcp-proxy.ts), Redis is a server of the
 * test's own; the Postgres other tests share is never stopped. No process may exit; the console API answers
 * 503 DATABASE_UNAVAILABLE in its envelope while the database is unreachable, and 200 again once it is back.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createDb } from '@turnpike/core/db/client';
import { generateTokenKey } from '@turnpike/core/domain/tokens';
import { createTokenRepo } from '@turnpike/core/repos/token.repo';
import { createUserRepo } from '@turnpike/core/repos/user.repo';
import { freePort } from '@turnpike/core/testing/free-port';
import { hasRedisServer, startTestRedisServer } from '@turnpike/core/testing/redis-server';
import { startTcpProxy, type TcpProxy } from '@turnpike/core/testing/tcp-proxy';
import { startFakeOpenAi } from '@turnpike/relay/testing/fake-openai';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabaseUrl } from './testing/test-app.ts';

const SERVER = fileURLToPath(new URL('./main.ts', import.meta.url));
const postgres = process.env.TEST_POSTGRES_URL;

interface ServerProcess {
  readonly url: string;
  readonly child: ChildProcess;
  exitCode(): number | null | undefined;
  output(): string;
  stop(): Promise<void>;
}

const running = new Set<ServerProcess>();

async function startServer(env: Record<string, string>): Promise<ServerProcess> {
  const port = await freePort();
  const merged: Record<string, string | undefined> = {
    ...process.env,
    SESSION_SECRET: 'outage-session-secret-0123456789',
    CRYPTO_SECRET: 'outage-crypto-secret-0123456789',
    DATA_DIR: await mkdtemp(path.join(tmpdir(), 'turnpike-outage-')),
    LOG_LEVEL: 'warn',
    GLOBAL_API_RATE_LIMIT_ENABLE: 'false',
    CRITICAL_RATE_LIMIT_ENABLE: 'false',
    ...env,
    PORT: String(port),
    HOST: '127.0.0.1',
  };
  // An empty value removes the variable (a server without DATABASE_URL opens the embedded database).
  for (const [key, value] of Object.entries(env)) if (value === '') delete merged[key];
  const child = spawn(process.execPath, [SERVER], { env: merged, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  let exited: number | null | undefined;
  const keep = (chunk: Buffer) => {
    log = (log + chunk.toString()).slice(-20_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const gone = new Promise<void>((resolve) =>
    child.once('exit', (code) => {
      exited = code;
      resolve();
    }),
  );
  const server: ServerProcess = {
    url: `http://127.0.0.1:${port}`,
    child,
    exitCode: () => exited,
    output: () => log,
    async stop() {
      running.delete(server);
      if (exited === undefined) child.kill('SIGKILL');
      await gone;
    },
  };
  running.add(server);
  return server;
}

/** Polls `check` until it is true; fails with the process's output when it exited or the time ran out. */
async function until(
  what: string,
  check: () => Promise<boolean>,
  server?: ServerProcess,
  ms = 30_000,
): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (server && server.exitCode() !== undefined)
      throw new Error(`${what}: the process exited (${server.exitCode()})\n${server.output()}`);
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms\n${server?.output() ?? ''}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const statusOf = async (url: string) => (await fetch(url)).status;
const readyz = async (server: ServerProcess) => {
  const response = await fetch(`${server.url}/readyz`);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
};

/** A console session: setup and login through HTTP, then calls with its cookie and New-Api-User. */
async function signInAsRoot(server: ServerProcess) {
  const root = { username: 'root', password: 'root-password-1' };
  const post = (route: string, body: unknown, cookie = '') =>
    fetch(`${server.url}${route}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie },
      body: JSON.stringify(body),
    });
  await post('/api/setup', { ...root, confirmPassword: root.password });
  const login = await post('/api/user/login', root);
  const body = (await login.json()) as { success: boolean; data: { id: number } };
  expect(body.success).toBe(true);
  const cookie = (login.headers.get('set-cookie') ?? '').split(';', 1)[0] ?? '';
  return (route: string) =>
    fetch(`${server.url}${route}`, { headers: { cookie, 'new-api-user': String(body.data.id) } });
}

/** A root access token header, as scripts use (`GET /api/user/token` once signed in). */
async function adminToken(server: ServerProcess): Promise<Record<string, string>> {
  const login = await fetch(`${server.url}/api/user/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'root', password: 'root-password-1' }),
  });
  const { data: me } = (await login.json()) as { data: { id: number } };
  const cookie = (login.headers.get('set-cookie') ?? '').split(';', 1)[0] ?? '';
  const token = (await (
    await fetch(`${server.url}/api/user/token`, { headers: { cookie, 'new-api-user': String(me.id) } })
  ).json()) as { data: string };
  return { authorization: token.data, 'new-api-user': String(me.id) };
}

afterEach(async () => {
  await Promise.all([...running].map((server) => server.stop()));
});

describe.skipIf(!postgres)('the database away, through a proxy of the test', () => {
  let database: Awaited<ReturnType<typeof createTestDatabaseUrl>>;
  let proxy: TcpProxy;
  let url: string;

  beforeAll(async () => {
    database = await createTestDatabaseUrl();
    proxy = await startTcpProxy(database.url as string);
    url = proxy.urlThrough(database.url as string);
  });
  afterAll(async () => {
    await proxy?.close();
    await database?.drop();
  });

  it('an api process started while the database is away waits live, then serves; an outage later is a 503 in the envelope, not an exit or a logout', async () => {
    await proxy.refuse();
    const api = await startServer({ ROLE: 'api', DATABASE_URL: url });
    await until(
      'live while the database is away',
      async () => (await statusOf(`${api.url}/healthz`)) === 200,
      api,
    );
    const waiting = await readyz(api);
    expect(waiting.status).toBe(503);
    expect(waiting.body).toMatchObject({ status: 'not ready' });
    expect(String((waiting.body.failures as string[])[0])).toMatch(/^database: /);

    await proxy.restore();
    await until(
      'ready once the database is back',
      async () => (await readyz(api)).status === 200,
      api,
      15_000,
    );
    const call = await signInAsRoot(api);
    expect((await call('/api/user/?p=0')).status).toBe(200);

    await proxy.refuse();
    proxy.resetAll();
    const refused = await call('/api/user/?p=0');
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBeTruthy();
    expect(await refused.json()).toEqual({
      success: false,
      message: 'the database is unreachable; try again shortly',
      code: 'DATABASE_UNAVAILABLE',
    });
    expect((await call('/api/user/self')).status).toBe(503);
    expect(api.exitCode()).toBeUndefined();

    await proxy.restore();
    await until('served again', async () => (await call('/api/user/?p=0')).status === 200, api, 15_000);
    // The session outlived the outage.
    expect((await call('/api/user/self')).status).toBe(200);
    expect(api.exitCode()).toBeUndefined();
  }, 90_000);

  it('a relay started while the database is away waits, becomes ready, and reports degraded (200) in a later outage', async () => {
    await proxy.restore();
    await proxy.refuse();
    const relay = await startServer({ ROLE: 'relay', DATABASE_URL: url });
    await until('live', async () => (await statusOf(`${relay.url}/healthz`)) === 200, relay);
    expect((await readyz(relay)).status).toBe(503);
    // A model call gets a 503 in OpenAI's shape meanwhile, with Retry-After.
    const early = await fetch(`${relay.url}/v1/chat/completions`, { method: 'POST', body: '{}' });
    expect(early.status).toBe(503);
    expect(early.headers.get('retry-after')).toBeTruthy();
    expect(await early.json()).toMatchObject({ error: { type: 'server_error' } });

    await proxy.restore();
    await until('ready', async () => (await readyz(relay)).status === 200, relay, 15_000);
    await proxy.refuse();
    proxy.resetAll();
    await until(
      'degraded',
      async () => {
        const { status, body } = await readyz(relay);
        return status === 200 && body.status === 'degraded';
      },
      relay,
      15_000,
    );
    // A call that needs the database (a key this relay has not seen yet) is a 503 in OpenAI's shape, not a 500.
    for (const route of ['/v1/chat/completions', '/v1/dashboard/billing/subscription']) {
      const answer = await fetch(`${relay.url}${route}`, {
        method: route.endsWith('completions') ? 'POST' : 'GET',
        headers: { authorization: 'Bearer sk-never-seen-before', 'content-type': 'application/json' },
        ...(route.endsWith('completions')
          ? { body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }) }
          : {}),
      });
      const text = await answer.text();
      expect({ route, status: answer.status, text }).toMatchObject({ route, status: 503 });
      expect(answer.headers.get('retry-after')).toBeTruthy();
      expect(JSON.parse(text)).toMatchObject({ error: { code: 'database_unavailable' } });
    }
    // The task routes answer it in the shapes of the APIs they stand in for.
    const tasks = [
      {
        route: '/mj/submit/imagine',
        body: { prompt: 'a road' },
        shape: { code: 503, type: 'turnpike_error' },
      },
      { route: '/suno/submit/music', body: { prompt: 'a road' }, shape: { code: 'database_unavailable' } },
    ];
    for (const { route, body, shape } of tasks) {
      const answer = await fetch(`${relay.url}${route}`, {
        method: 'POST',
        headers: { authorization: 'Bearer sk-never-seen-before', 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const text = await answer.text();
      expect({ route, status: answer.status, text }).toMatchObject({ route, status: 503 });
      expect(answer.headers.get('retry-after')).toBeTruthy();
      expect(JSON.parse(text)).toMatchObject(shape);
    }
    await proxy.restore();
    await until('ready again', async () => (await readyz(relay)).body.status === 'ready', relay, 15_000);
    expect(relay.exitCode()).toBeUndefined();
  }, 90_000);

  it('an all-in-one server under model traffic rides an outage: no exit, no 500, calls served from its caches and each billed once', async () => {
    await proxy.restore();
    const upstream = await startFakeOpenAi({});
    const server = await startServer({ ROLE: 'all', DATABASE_URL: url });
    const direct = await createDb({ url: database.url as string, maxConnections: 2 });
    try {
      await until('ready', async () => (await readyz(server)).status === 200, server, 30_000);
      await signInAsRoot(server);
      const user = await createUserRepo(direct.db).insert({
        username: `outage-${randomBytes(4).toString('hex')}`,
        password: 'not-a-real-hash',
        quota: 1_000_000_000,
      });
      const token = await createTokenRepo(direct.db).insert({
        userId: user.id,
        key: generateTokenKey(),
        name: 'outage',
        remainQuota: 0,
        unlimitedQuota: true,
      });
      const admin = await adminToken(server);
      const saved = await fetch(`${server.url}/api/channel/`, {
        method: 'POST',
        headers: { ...admin, 'content-type': 'application/json' },
        body: JSON.stringify({
          name: 'fake upstream',
          type: 1,
          key: 'sk-upstream',
          base_url: upstream.url,
          models: 'gpt-4o-mini',
          group: 'default',
        }),
      });
      expect(((await saved.json()) as { success: boolean }).success).toBe(true);
      // $0.002 a call: 0.002 x 500000 = 1000 quota units each, by the documented rule (1 USD = 500000 units).
      const priced = await fetch(`${server.url}/api/option/`, {
        method: 'PUT',
        headers: { ...admin, 'content-type': 'application/json' },
        body: JSON.stringify({ key: 'ModelPrice', value: JSON.stringify({ 'gpt-4o-mini': 0.002 }) }),
      });
      expect(((await priced.json()) as { success: boolean }).success).toBe(true);
      const statuses = new Map<number, number>();
      let servedDuringOutage = 0;
      let outage = false;
      let stop = false;
      const modelCall = () =>
        fetch(`${server.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer sk-${token.key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
        }).then(async (r) => {
          await r.arrayBuffer();
          statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
          if (outage && r.status === 200) servedDuringOutage += 1;
        });
      const callers = Array.from({ length: 4 }, async () => {
        while (!stop) await modelCall();
      });
      await until('served before', async () => (statuses.get(200) ?? 0) >= 20, server);
      outage = true;
      await proxy.refuse();
      proxy.resetAll();
      await until('served during the outage', async () => servedDuringOutage >= 150, server);
      outage = false;
      await proxy.restore();
      stop = true;
      await Promise.all(callers);
      expect([...statuses.keys()].filter((s) => s >= 500 && s !== 503)).toEqual([]);
      expect(server.exitCode()).toBeUndefined();
      expect(server.output()).not.toContain('stopping after an unexpected error');
      await until('ready after', async () => (await readyz(server)).status === 200, server, 15_000);
      // What was settled during the outage waited in the local spool (no Redis): once written, the books hold
      // exactly the calls served, each at its price, once.
      const served = statuses.get(200) ?? 0;
      const books = async () => {
        const { rows } = (await direct.db.execute(
          sql`select u.quota, u.used_quota,
                     (select coalesce(sum(quota), 0) from logs where user_id = u.id and type = 2) as logged,
                     (select count(*) from logs where user_id = u.id and type = 2) as logs,
                     (select count(*) from (select 1 from logs where user_id = u.id and type = 2
                                             group by request_id having count(*) > 1) d) as duplicates
                from users u where u.id = ${user.id}`,
        )) as unknown as { rows: Record<string, string>[] };
        const row = rows[0] as Record<string, string>;
        return {
          deducted: 1_000_000_000 - Number(row.quota),
          usedQuota: Number(row.used_quota),
          logged: Number(row.logged),
          logs: Number(row.logs),
          duplicates: Number(row.duplicates),
        };
      };
      await until('every served call written', async () => (await books()).logs >= served, server, 30_000);
      const written = await books();
      expect(written).toEqual({
        deducted: served * 1000,
        usedQuota: served * 1000,
        logged: served * 1000,
        logs: served,
        duplicates: 0,
      });
    } finally {
      await direct.close();
      await upstream.close();
    }
  }, 120_000);

  it('a process asked to stop while it waits for the database exits 0 at once', async () => {
    await proxy.refuse();
    const api = await startServer({ ROLE: 'api', DATABASE_URL: url });
    await until('waiting', async () => (await readyz(api)).status === 503, api);
    api.child.kill('SIGTERM');
    await until('exited', async () => api.exitCode() !== undefined, undefined, 10_000);
    expect(api.exitCode()).toBe(0);
  });

  it('keeps serving when every backend is terminated under concurrent console calls (a failover)', async () => {
    await proxy.restore();
    const api = await startServer({ ROLE: 'api', DATABASE_URL: url });
    await until('ready', async () => (await readyz(api)).status === 200, api, 30_000);
    const call = await signInAsRoot(api);
    const admin = new pg.Client({ connectionString: postgres });
    await admin.connect();
    const name = new URL(database.url as string).pathname.slice(1);
    const statuses = new Map<number, number>();
    try {
      for (let round = 0; round < 5; round++) {
        const calls = Array.from({ length: 8 }, () =>
          call('/api/user/?p=0').then((r) => statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1)),
        );
        await admin.query(
          'select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()',
          [name],
        );
        await Promise.all(calls);
      }
    } finally {
      await admin.end();
    }
    // Each call was served or refused as an outage; none was a 500, and the process is alive.
    expect([...statuses.keys()].filter((s) => s !== 200 && s !== 503)).toEqual([]);
    expect(api.exitCode()).toBeUndefined();
    await until('served after the failover', async () => (await call('/api/user/?p=0')).status === 200, api);
  }, 90_000);
});

describe.skipIf(!postgres || !hasRedisServer())('Redis away at boot', () => {
  it('a relay whose Redis is down at start comes up, and is ready once Redis is', async () => {
    const database = await createTestDatabaseUrl();
    const redis = await startTestRedisServer();
    try {
      await redis.stop();
      const relay = await startServer({
        ROLE: 'relay',
        DATABASE_URL: database.url as string,
        REDIS_URL: redis.url,
        REDIS_KEY_PREFIX: `outage-${randomBytes(4).toString('hex')}:`,
      });
      await until('live', async () => (await statusOf(`${relay.url}/healthz`)) === 200, relay);
      await until(
        'waiting for Redis',
        async () => JSON.stringify((await readyz(relay)).body).includes('redis'),
        relay,
      );
      await redis.start();
      await until('ready', async () => (await readyz(relay)).status === 200, relay, 20_000);
      expect(relay.exitCode()).toBeUndefined();
    } finally {
      await redis.close();
      await database.drop();
    }
  }, 90_000);
});

describe('the embedded database folder', () => {
  it('a folder another live process holds is a clear error naming DATA_DIR, with exit code 78', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'turnpike-locked-'));
    // This test's own process holds it, as a second server on the same DATA_DIR would.
    await writeFile(path.join(dataDir, 'db.lock'), `${process.pid} ${hostname()}\n`);
    const server = await startServer({ ROLE: 'all', DATA_DIR: dataDir, DATABASE_URL: '' });
    await until('exited', async () => server.exitCode() !== undefined, undefined, 30_000);
    expect(server.exitCode()).toBe(78);
    expect(server.output()).toContain(
      `${path.join(dataDir, 'db')} (DATA_DIR) is in use by process ${process.pid}`,
    );
    expect(server.output()).not.toMatch(/\n\s+at /);
  });

  it('a data folder that cannot be created is a clear error naming DATA_DIR, with exit code 73', async () => {
    const file = path.join(await mkdtemp(path.join(tmpdir(), 'turnpike-file-')), 'not-a-folder');
    await writeFile(file, '');
    const server = await startServer({ ROLE: 'all', DATA_DIR: path.join(file, 'data'), DATABASE_URL: '' });
    await until('exited', async () => server.exitCode() !== undefined, undefined, 30_000);
    expect(server.exitCode()).toBe(73);
    expect(server.output()).toContain('(DATA_DIR) is not a folder');
    expect(server.output()).not.toMatch(/\n\s+at /);
  });
});
