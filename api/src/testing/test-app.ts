import type { ChannelProbe } from '@turnpike/core/channels/channel-probe';
import type { ResolvedConfig } from '@turnpike/core/config';
import type { ResolveHost } from '@turnpike/core/net/guarded-fetch';
import type { Runtime, RuntimeDeps } from '@turnpike/core/runtime/runtime';
import { createTestRuntime, type TestRuntimeOptions } from '@turnpike/core/testing/test-runtime';

export { createTestDatabaseUrl } from '@turnpike/core/testing/test-runtime';

import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { buildApp } from '../app.ts';
import type { PlanServiceOptions } from '../modules/plans/plans.service.ts';

/**
 * The console API on core's test runtime (`createTestRuntime`: PGlite, or Postgres and Redis when
 * TEST_POSTGRES_URL / TEST_REDIS_URL are set). A test of the API with the relay (the channel probe, ROLE=all)
 * lives in server/.
 */
export interface TestAppOptions extends TestRuntimeOptions {
  /** Makes the channel tests' probe (the server's tests pass the relay's); without it they are unavailable. */
  channelProbe?: (deps: RuntimeDeps) => ChannelProbe;
  /** Answers the lookups of the address checks (docs/adr/0039) instead of DNS. */
  resolveHost?: ResolveHost;
  /** The API's clock in Unix seconds (quota window states are read at this moment). */
  now?: () => number;
  /** Where Stripe's and Creem's APIs are: local stand-ins speaking their wire. */
  paymentEndpoints?: PlanServiceOptions;
}

export interface TestApp {
  readonly app: FastifyInstance;
  readonly runtime: Runtime;
  readonly config: ResolvedConfig;
  close(): Promise<void>;
}

export async function createTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const { channelProbe, resolveHost, now, paymentEndpoints, ...runtimeOptions } = options;
  const base = await createTestRuntime(runtimeOptions);
  const probe = channelProbe?.(base.runtime.deps);
  const app = await buildApp({
    ...base.runtime.deps,
    channelProbe: probe,
    resolveHost,
    now,
    paymentEndpoints,
  }).catch(async (error: unknown) => {
    await probe?.close();
    await base.close();
    throw error;
  });
  await app.ready();
  return {
    app,
    runtime: base.runtime,
    config: base.config,
    async close() {
      await app.close();
      await probe?.close();
      await base.close();
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
