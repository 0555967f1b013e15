import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { loadConfig, type ResolvedConfig } from '@turnpike/core/config';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import pg from 'pg';
import { buildApp } from '../app.ts';
import { createRuntime, type Runtime } from '../runtime.ts';

/**
 * A fresh database for one test file: in-memory PGlite by default, or a database of its own on the Postgres of
 * TEST_POSTGRES_URL (so files run in parallel). Redis joins when TEST_REDIS_URL is set, under a key prefix of
 * the file's own unless `redisKeyPrefix` is shared on purpose.
 */
export async function createTestDatabaseUrl(): Promise<{ url: string | undefined; drop(): Promise<void> }> {
  const base = process.env.TEST_POSTGRES_URL;
  if (!base) return { url: undefined, drop: async () => {} };
  const name = `turnpike_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(base);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: base });
      await client.connect();
      await client.query(`drop database if exists ${name} with (force)`);
      await client.end();
    },
  };
}

export interface TestAppOptions {
  /** Share one database between apps (multi-instance tests). */
  databaseUrl?: string;
  env?: Record<string, string>;
  redisKeyPrefix?: string;
}

export interface TestApp {
  readonly app: FastifyInstance;
  readonly runtime: Runtime;
  readonly config: ResolvedConfig;
  close(): Promise<void>;
}

export async function createTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const owned = options.databaseUrl === undefined ? await createTestDatabaseUrl() : undefined;
  const databaseUrl = options.databaseUrl ?? owned?.url;
  const redisUrl = process.env.TEST_REDIS_URL;
  const base = loadConfig({
    DATA_DIR: path.join(os.tmpdir(), `turnpike-test-${randomBytes(4).toString('hex')}`),
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    ...(redisUrl ? { REDIS_URL: redisUrl } : {}),
    REDIS_KEY_PREFIX: options.redisKeyPrefix ?? `turnpike-test:${randomBytes(4).toString('hex')}:`,
    SESSION_SECRET: 'test-session-secret-0123456789',
    CRYPTO_SECRET: 'test-crypto-secret-0123456789',
    LOG_LEVEL: 'silent',
    ...options.env,
  });
  const config = base as ResolvedConfig;
  // Without a Postgres URL the runtime would open PGlite on disk; tests want it in memory.
  const runtime = await createRuntime(config, { inMemory: !databaseUrl });
  const app = await buildApp(runtime.deps);
  await app.ready();
  return {
    app,
    runtime,
    config,
    async close() {
      await app.close();
      await runtime.close();
      await owned?.drop();
    },
  };
}

/** A console client for tests: keeps the session cookie and sends the New-Api-User header like the console. */
export class ConsoleClient {
  cookie = '';
  userId: number | undefined;
  accessToken: string | undefined;

  private readonly app: FastifyInstance;

  constructor(app: FastifyInstance) {
    this.app = app;
  }

  async request(
    method: InjectOptions['method'],
    url: string,
    payload?: unknown,
  ): Promise<LightMyRequestResponse> {
    const headers: Record<string, string> = {};
    if (this.cookie) headers.cookie = this.cookie;
    if (this.userId !== undefined) headers['new-api-user'] = String(this.userId);
    if (this.accessToken) headers.authorization = `Bearer ${this.accessToken}`;
    const response = await this.app.inject({
      method,
      url,
      headers,
      ...(payload === undefined ? {} : { payload: payload as InjectOptions['payload'] }),
    });
    const setCookie = response.cookies.find((c) => c.name === 'session');
    if (setCookie) this.cookie = setCookie.value ? `session=${setCookie.value}` : '';
    return response;
  }

  get = (url: string) => this.request('GET', url);
  post = (url: string, payload?: unknown) => this.request('POST', url, payload ?? {});
  put = (url: string, payload?: unknown) => this.request('PUT', url, payload ?? {});
  delete = (url: string) => this.request('DELETE', url);

  async login(username: string, password: string): Promise<LightMyRequestResponse> {
    const response = await this.post('/api/user/login', { username, password });
    if (response.json().success) this.userId = response.json().data.id;
    return response;
  }
}

/** Saves an option as `admin` does in the console; a refusal fails the test with the server's message. */
export async function saveOption(admin: ConsoleClient, key: string, value: string): Promise<void> {
  const saved = await admin.put('/api/option/', { key, value });
  if (!saved.json().success) throw new Error(`option ${key} not saved: ${saved.body}`);
}

export const ROOT = { username: 'root', password: 'root-password-1' } as const;

/** Completes first-run setup and returns a console client signed in as root. */
export async function setupRoot(app: FastifyInstance): Promise<ConsoleClient> {
  const client = new ConsoleClient(app);
  const setup = await client.post('/api/setup', { ...ROOT, confirmPassword: ROOT.password });
  if (!setup.json().success) throw new Error(`setup failed: ${setup.body}`);
  const login = await client.login(ROOT.username, ROOT.password);
  if (!login.json().success) throw new Error(`root login failed: ${login.body}`);
  return client;
}

/** Registers a regular user through the public endpoint and signs them in. */
export async function registerUser(
  app: FastifyInstance,
  username: string,
  password = 'user-password-1',
  extra: Record<string, unknown> = {},
): Promise<ConsoleClient> {
  const client = new ConsoleClient(app);
  const registered = await client.post('/api/user/register', {
    username,
    password,
    password2: password,
    ...extra,
  });
  if (!registered.json().success) throw new Error(`register failed: ${registered.body}`);
  const login = await client.login(username, password);
  if (!login.json().success) throw new Error(`login failed: ${login.body}`);
  return client;
}
