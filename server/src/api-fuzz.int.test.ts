import { hashPassword } from '@turnpike/core/crypto/password';
import { users } from '@turnpike/core/db/schema/index';
import {
  createRandom,
  type FieldTypes,
  fillParamsHostile,
  fuzzSeed,
  hostileBody,
  hostileQuery,
  type Random,
  readFieldTypes,
  saturatedObject,
  saturatedQuery,
} from '@turnpike/core/testing/fuzz-values';
import { eq } from 'drizzle-orm';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse, RouteOptions } from 'fastify';
import { type Dispatcher, getGlobalDispatcher, MockAgent, setGlobalDispatcher } from 'undici';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  ConsoleClient,
  createTestApp,
  ROOT,
  registerUser,
  setupRoot,
  type TestApp,
} from './testing/test-app.ts';

/**
 * Issue 16, item 8: every /api route, taken from the app's own route table, gets hostile requests — malformed JSON,
 * wrong types, NUL bytes and lone surrogates, huge strings and numbers, SQL- and path-looking text, wrong content
 * types, oversized and compressed-bomb bodies — as a visitor, a user and an administrator. No answer may be a 5xx,
 * every answer is the envelope, and the process keeps answering. Deterministic: FUZZ_SEED replays a run; the count
 * is fixed (FUZZ_CASES per route and caller) and a deadline bounds the time.
 */
const seen = vi.hoisted(() => ({ routes: [] as RouteOptions[] }));

vi.mock('fastify', async (importOriginal) => {
  const original = await importOriginal<typeof import('fastify')>();
  const build = original.default as unknown as (options?: object) => FastifyInstance;
  const create = ((options?: object) => {
    const app = build(options);
    app.addHook('onRoute', (route) => {
      seen.routes.push(route);
    });
    return app;
  }) as unknown as typeof original.default;
  return { ...original, default: create, fastify: create };
});

const SEED = fuzzSeed(160_008);
const CASES = Number(process.env.FUZZ_CASES) || 20;
const DEADLINE_MS = 55_000;
const API_BODY_LIMIT = 10 * 1024 * 1024;

/** Routes that call a provider: their upstream is a closed loopback port, and a 502 saying so is their answer. */
const OUTBOUND = new Set([
  'POST /api/channel/fetch_models',
  'GET /api/channel/fetch_models/:id',
  'GET /api/channel/update_balance',
  'GET /api/channel/update_balance/:id',
  'GET /api/channel/test',
  'GET /api/channel/test/:id',
]);
const DEAD_UPSTREAM = 'http://127.0.0.1:9';

/** Every field the /api contracts know, with what it accepts, so hostile requests name real fields. */
async function contractFields(): Promise<FieldTypes> {
  const modules: Record<string, unknown>[] = [];
  for (const name of [
    'channels',
    'data',
    'envelope',
    'logs',
    'pricing',
    'redemptions',
    'tasks',
    'tokens',
    'users',
    'verification',
    'wallet',
  ])
    modules.push((await import(`@turnpike/core/contracts/${name}`)) as Record<string, unknown>);
  return readFieldTypes(modules);
}

interface Route {
  readonly method: string;
  readonly url: string;
}

function apiRoutes(app: FastifyInstance): Route[] {
  const table = new Map<string, Route>();
  for (const route of seen.routes) {
    if (!route.url.startsWith('/api')) continue;
    for (const method of Array.isArray(route.method) ? route.method : [route.method]) {
      if (method === 'HEAD' || method === 'OPTIONS') continue;
      const has = (url: string) => app.hasRoute({ method, url });
      if (!has(route.url) && !has(route.url.replace(/(.)\/$/, '$1'))) continue;
      table.set(`${method} ${route.url}`, { method, url: route.url });
    }
  }
  return [...table.values()].sort((a, b) => `${a.url} ${a.method}`.localeCompare(`${b.url} ${b.method}`));
}

type CallerName = 'visitor' | 'user' | 'admin';

describe(`fuzzing every /api route (seed ${SEED}, ${CASES} cases per route and caller)`, () => {
  let t: TestApp;
  let routes: Route[];
  let fieldTypes: FieldTypes;
  let fields: string[];
  const callers = {} as Record<CallerName, ConsoleClient>;
  const passwords: Record<string, string> = { admin: ROOT.password, user: 'fuzz-user-pass-1' };
  let previousDispatcher: Dispatcher;

  beforeAll(async () => {
    // Provider calls may only reach loopback (the dead upstream); anything else fails as an unreachable upstream.
    previousDispatcher = getGlobalDispatcher();
    const agent = new MockAgent();
    agent.disableNetConnect();
    agent.enableNetConnect(/^(127\.0\.0\.1|localhost)(:\d+)?$/);
    setGlobalDispatcher(agent);

    seen.routes.length = 0;
    t = await createTestApp({
      env: {
        GLOBAL_API_RATE_LIMIT: '1000000',
        CRITICAL_RATE_LIMIT: '1000000',
        GITHUB_OAUTH_URL: DEAD_UPSTREAM,
        GITHUB_API_URL: DEAD_UPSTREAM,
        LINUXDO_CONNECT_URL: DEAD_UPSTREAM,
        TURNSTILE_VERIFY_URL: DEAD_UPSTREAM,
      },
    });
    routes = apiRoutes(t.app);
    fieldTypes = await contractFields();
    fields = [...fieldTypes.keys()];
    callers.admin = await setupRoot(t.app);
    callers.user = await registerUser(t.app, 'fuzzuser', passwords.user);
    callers.visitor = new ConsoleClient(t.app);
  }, 60_000);
  afterAll(async () => {
    setGlobalDispatcher(previousDispatcher);
    await t?.close();
  });

  /** Signs a caller in again when a fuzzed call signed it out, renamed, disabled, deleted or demoted it. */
  async function restore(name: CallerName): Promise<void> {
    if (name === 'visitor') return;
    const client = callers[name];
    if ((await client.get('/api/user/self')).statusCode === 200) return;
    const username = name === 'admin' ? ROOT.username : 'fuzzuser';
    await t.runtime.deps.db
      .update(users)
      .set({
        username,
        password: await hashPassword(passwords[name]!),
        status: 1,
        role: name === 'admin' ? 100 : 1,
        deletedAt: null,
      })
      .where(eq(users.id, client.userId!));
    const fresh = new ConsoleClient(t.app);
    const login = await fresh.login(username, passwords[name]!);
    if (!login.json().success) throw new Error(`cannot sign ${name} in again: ${login.body}`);
    callers[name] = fresh;
  }

  function request(
    caller: ConsoleClient,
    options: InjectOptions & { headers?: Record<string, string> },
  ): Promise<LightMyRequestResponse> {
    const headers: Record<string, string> = { ...options.headers };
    if (caller.cookie) headers.cookie = caller.cookie;
    if (caller.userId !== undefined) headers['new-api-user'] = String(caller.userId);
    return t.app.inject({ ...options, headers });
  }

  /** What is wrong with an answer, or undefined. */
  function problemOf(route: Route, response: LightMyRequestResponse): string | undefined {
    const status = response.statusCode;
    const outbound = OUTBOUND.has(`${route.method} ${route.url}`);
    if (status >= 500 && !(outbound && status === 502)) return `answered ${status}`;
    if (!response.headers['x-request-id']) return 'no x-request-id';
    if (status >= 300 && status < 400) return undefined;
    // A download (the audit log's JSON lines, a file) is not the envelope; one line of JSON lines parses as JSON.
    if (status < 400 && !String(response.headers['content-type'] ?? '').startsWith('application/json'))
      return undefined;
    let body: unknown;
    try {
      body = response.json();
    } catch {
      return status >= 400 ? 'an error that is not JSON' : undefined;
    }
    const envelope = body as { success?: unknown; message?: unknown };
    if (typeof envelope !== 'object' || envelope === null || typeof envelope.success !== 'boolean')
      return 'not the envelope (no boolean success)';
    if (typeof envelope.message !== 'string') return 'not the envelope (no message)';
    if (status >= 400 && envelope.success !== false) return `a ${status} with success true`;
    return undefined;
  }

  function describeRequest(options: InjectOptions, label: string): string {
    const payload = options.payload;
    const text =
      payload === undefined
        ? ''
        : Buffer.isBuffer(payload)
          ? `<${payload.length} bytes>`
          : String(payload).length > 160
            ? `${String(payload).slice(0, 160)}… (${String(payload).length} chars)`
            : String(payload);
    return `${options.method} ${String(options.url).slice(0, 200)} [${label}] ${JSON.stringify(options.headers ?? {})} ${text}`;
  }

  it('never answers a 5xx, always answers the envelope, and keeps answering', {
    timeout: 120_000,
  }, async () => {
    const rng: Random = createRandom(SEED);
    const started = Date.now();
    const problems = new Map<string, string>();
    let sent = 0;
    let stopped = false;

    expect(routes.length).toBeGreaterThan(60);
    expect(routes.map((r) => `${r.method} ${r.url}`)).toEqual(
      expect.arrayContaining(['POST /api/user/login', 'GET /api/log/', 'POST /api/channel/tag/enabled']),
    );

    outer: for (let round = 0; round < CASES; round++) {
      for (const route of routes) {
        for (const name of ['visitor', 'user', 'admin'] as const) {
          if (Date.now() - started > DEADLINE_MS) {
            stopped = true;
            break outer;
          }
          const hasBody = route.method !== 'GET';
          const queryRoll = rng.next();
          const query =
            queryRoll < 0.3
              ? `?${saturatedQuery(rng, fieldTypes)}`
              : queryRoll < 0.6
                ? `?${hostileQuery(rng, fields)}`
                : '';
          const url = `${fillParamsHostile(rng, route.url)}${query}`;
          const body = !hasBody
            ? undefined
            : rng.chance(0.4)
              ? {
                  label: 'every field, hostile values of its type',
                  payload: JSON.stringify(saturatedObject(rng, fieldTypes)),
                  headers: { 'content-type': 'application/json' },
                }
              : hostileBody(rng, fields, API_BODY_LIMIT);
          let payload = body?.payload;
          if (
            OUTBOUND.has(`${route.method} ${route.url}`) &&
            body?.payload &&
            String(body.payload).startsWith('{"')
          ) {
            // Keep provider calls on loopback: a hostile body still names the dead upstream.
            try {
              payload = JSON.stringify({ ...JSON.parse(String(payload)), base_url: DEAD_UPSTREAM });
            } catch {}
          }
          const options: InjectOptions & { headers: Record<string, string> } = {
            method: route.method as 'GET',
            url,
            headers: { ...(body?.headers ?? {}) },
            ...(payload === undefined ? {} : { payload }),
          };
          const response = await request(callers[name], options);
          sent += 1;
          const problem = problemOf(route, response);
          if (problem) {
            const key = `${route.method} ${route.url}: ${problem}`;
            if (!problems.has(key))
              problems.set(
                key,
                `${key}\n    as ${name}: ${describeRequest(options, body?.label ?? 'query')}\n    -> ${response.body.slice(0, 300)}`,
              );
          }
          if (response.statusCode === 401 || response.body.includes('"USER_DISABLED"')) await restore(name);
          if (sent % 250 === 0) {
            const status = await t.app.inject({ method: 'GET', url: '/api/status' });
            expect(status.statusCode, `the app stopped answering after ${sent} requests`).toBe(200);
          }
        }
      }
    }

    const status = await t.app.inject({ method: 'GET', url: '/api/status' });
    expect(status.statusCode).toBe(200);
    console.info(
      `fuzz: ${sent} requests in ${Date.now() - started} ms, seed ${SEED}${stopped ? ', cut by the deadline' : ''}`,
    );
    // A bounded run: the deadline may cut it short on a slow machine, never below a floor of real coverage.
    expect(sent, `only ${sent} requests in ${DEADLINE_MS} ms`).toBeGreaterThan(routes.length * 3 * 2);
    expect(
      [...problems.values()],
      `seed ${SEED}, ${sent} requests${stopped ? ' (cut by the deadline)' : ''}`,
    ).toEqual([]);
  });
});
