import { Role } from '@turnpike/core/domain/users';
import { createSessionCodec } from '@turnpike/core/sessions/session-codec';
import { newSessionId } from '@turnpike/core/sessions/session-end';
import {
  createRandom,
  fillParamsHostile,
  fuzzSeed,
  hostileBody,
  hostileQuery,
  type Random,
} from '@turnpike/core/testing/fuzz-values';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse, RouteOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type FakeOpenAi, startFakeOpenAi } from './testing/fake-openai.ts';
import { createRelayTestApp, type RelayTestApp, seedFakeModels } from './testing/relay-test-app.ts';

/**
 * Issue 16, item 8, for the relay: every relay route, taken from the app's route table (the front door's routes
 * are the same paths), gets seeded hostile requests — valid requests with fields replaced by wrong types, NUL
 * bytes, lone surrogates, huge strings and numbers, SQL- and path-looking text; malformed JSON; wrong content
 * types; oversized and compressed-bomb bodies — with no key, a user's key and an administrator's key (and their
 * console sessions on /pg). No answer may be a 5xx, every error is in the route's protocol, and the relay keeps
 * answering. FUZZ_SEED replays a run; FUZZ_CASES sets the count; a deadline bounds the time.
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

const SEED = fuzzSeed(160_108);
const CASES = Number(process.env.FUZZ_CASES) || 25;
const DEADLINE_MS = 50_000;
const RELAY_BODY_LIMIT = 32 * 1024 * 1024;

const HI = [{ role: 'user', content: 'hi' }];

/** A valid request per POST route, which the fuzz mutates field by field. */
const VALID_BODIES: Record<string, Record<string, unknown>> = {
  '/v1/chat/completions': { model: 'gpt-4o-mini', messages: HI, stream: false, max_tokens: 16 },
  '/pg/chat/completions': { model: 'gpt-4o-mini', messages: HI, group: '' },
  '/v1/completions': { model: 'gpt-4o-mini', prompt: 'hi', max_tokens: 16 },
  '/v1/embeddings': { model: 'text-embedding-3-small', input: 'hi' },
  '/v1/engines/:model/embeddings': { input: 'hi' },
  '/v1/moderations': { model: 'gpt-4o-mini', input: 'hi' },
  '/v1/rerank': { model: 'gpt-4o-mini', query: 'hi', documents: ['a', 'b'] },
  '/v1/responses': { model: 'gpt-4o-mini', input: 'hi', stream: false },
  '/v1/images/generations': { model: 'gpt-4o-mini', prompt: 'a cat', n: 1 },
  '/v1/audio/speech': { model: 'gpt-4o-mini', input: 'hi', voice: 'alloy' },
};

/** Field names the relay and the providers read. */
const FIELDS = [
  'model',
  'messages',
  'stream',
  'stream_options',
  'max_tokens',
  'max_completion_tokens',
  'n',
  'temperature',
  'top_p',
  'tools',
  'tool_choice',
  'response_format',
  'user',
  'group',
  'prompt',
  'input',
  'query',
  'documents',
  'voice',
  'size',
  'encoding_format',
  'dimensions',
  'content',
  'role',
];

interface Route {
  readonly method: string;
  readonly url: string;
}

function relayRoutes(app: FastifyInstance): Route[] {
  const table = new Map<string, Route>();
  for (const route of seen.routes) {
    for (const method of Array.isArray(route.method) ? route.method : [route.method]) {
      if (method === 'HEAD') continue;
      if (!app.hasRoute({ method, url: route.url })) continue;
      table.set(`${method} ${route.url}`, { method, url: route.url });
    }
  }
  return [...table.values()].sort((a, b) => `${a.url} ${a.method}`.localeCompare(`${b.url} ${b.method}`));
}

type CallerName = 'anonymous' | 'user' | 'admin';

/**
 * Findings of this suite in relay code others are changing under issue 16 (each is in its closing note with the
 * request that reproduces it). They are tolerated so the suite guards everything else meanwhile, and counted in the
 * suite's title so a run shows them. Each is matched against the whole finding: route, problem, and the answer.
 * Remove an entry once its fix lands.
 */
const KNOWN_ELSEWHERE: ReadonlyArray<{ readonly finding: RegExp; readonly owner: string }> = [
  {
    // Not a defect: `/v1/models/<dot segments>` resolves to another path, answered in that path's protocol.
    finding:
      /^POST \/v1\/models\/\*: not Gemini's error shape\n[\s\S]*-> \{"error":\{"message":"no route POST \/v1\/? /,
    owner:
      'a Gemini action path whose dot segments resolve outside /v1/models/ is refused as the path it resolves to',
  },
  {
    // The same path with a body that cannot be read (empty, or over the limit): refused before routing, in the
    // protocol of /v1 it resolves to.
    finding:
      /^POST \/v1\/models\/\*: not Gemini's error shape\n\s*as [a-z]+: POST \/v1\/models\/(?:%2e|\.){2}(?:\/|\s)[\s\S]*-> \{"error":\{"message":"(?:Body cannot be empty|Request body is too large)/i,
    owner:
      'a Gemini action path whose dot segments resolve outside /v1/models/ is refused as the path it resolves to',
  },
];

/** What is wrong with an error answer's shape for its route, or undefined. */
function shapeProblem(route: Route, body: unknown): string | undefined {
  const url = route.url;
  const record = body as Record<string, unknown> | null;
  if (typeof record !== 'object' || record === null) return 'an error that is not a JSON object';
  const error = record.error as Record<string, unknown> | undefined;
  // Gemini's actions are served on /v1/models/{model}:{action} as on /v1beta.
  const gemini = url.startsWith('/v1beta/') || (route.method === 'POST' && url === '/v1/models/*');
  if (url.startsWith('/v1/messages')) {
    return record.type === 'error' && typeof error?.message === 'string'
      ? undefined
      : "not Anthropic's error shape";
  }
  if (gemini) {
    return typeof error?.message === 'string' && typeof error?.code === 'number'
      ? undefined
      : "not Gemini's error shape";
  }
  if (url === '/metrics') return undefined;
  // The task proxies answer in the shapes of the APIs they stand in for.
  if (/^\/mj(-[a-z]+)?\/mj\/|^\/mj\//.test(url))
    return typeof record.code === 'number' && typeof record.description === 'string'
      ? undefined
      : "not Midjourney-proxy's error shape";
  if (url.startsWith('/suno/'))
    return typeof record.code === 'string' && typeof record.message === 'string'
      ? undefined
      : "not Suno-API's error shape";
  // Kling's and Jimeng's native video routes (tasks/video/reference.ts): `{ code, message, request_id }`.
  if (url.startsWith('/kling/') || url.startsWith('/jimeng/'))
    return typeof record.code === 'number' &&
      record.code !== 0 &&
      record.code !== 10000 &&
      typeof record.message === 'string' &&
      typeof record.request_id === 'string'
      ? undefined
      : url.startsWith('/kling/')
        ? "not Kling's error shape"
        : "not Jimeng's error shape";
  return typeof error?.message === 'string' && typeof error?.type === 'string'
    ? undefined
    : "not OpenAI's error shape";
}

describe(`fuzzing every relay route (seed ${SEED}, ${CASES} cases per route and caller, ${KNOWN_ELSEWHERE.length} findings known elsewhere)`, () => {
  let t: RelayTestApp;
  let fake: FakeOpenAi;
  let routes: Route[];
  const callers = {} as Record<CallerName, Record<string, string>>;

  beforeAll(async () => {
    fake = await startFakeOpenAi({ apiKey: 'sk-upstream' });
    fake.setRecording(false);
    seen.routes.length = 0;
    t = await createRelayTestApp();
    await seedFakeModels(t, fake.url);
    await t.startRelay();
    routes = relayRoutes(t.relay);
    const codec = createSessionCodec(t.runtime.deps.config.sessionSecret);
    callers.anonymous = {};
    for (const [name, role] of [
      ['user', Role.User],
      ['admin', Role.Admin],
    ] as const) {
      const user = await t.seedUser({ quota: 1_000_000_000, role });
      const token = await t.seedToken(user.id);
      const session = codec.encode({ uid: user.id, sid: newSessionId(), gen: user.sessionGeneration });
      callers[name] = {
        authorization: `Bearer sk-${token.key}`,
        cookie: `session=${encodeURIComponent(session)}`,
        'new-api-user': String(user.id),
      };
    }
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await fake?.close();
  });

  function describeRequest(options: InjectOptions, label: string): string {
    const payload = options.payload;
    const text =
      payload === undefined
        ? ''
        : Buffer.isBuffer(payload)
          ? `<${payload.length} bytes>`
          : String(payload).length > 200
            ? `${String(payload).slice(0, 200)}… (${String(payload).length} chars)`
            : String(payload);
    const { authorization: _a, cookie: _c, ...headers } = (options.headers ?? {}) as Record<string, string>;
    return `${options.method} ${String(options.url).slice(0, 200)} [${label}] ${JSON.stringify(headers)} ${text}`;
  }

  function problemOf(route: Route, response: LightMyRequestResponse): string | undefined {
    const status = response.statusCode;
    if (status >= 500) {
      let code = '';
      try {
        code = String((response.json() as { error?: { code?: unknown } }).error?.code ?? '');
      } catch {}
      // What the gateway does not implement (files, fine-tunes, ...) is a deliberate 501, as in the reference.
      if (status === 501 && code === 'api_not_implemented') return undefined;
      return `answered ${status}${code ? ` ${code}` : ''}`;
    }
    if (!response.headers['x-request-id']) return 'no x-request-id';
    if (status < 400) return undefined;
    let body: unknown;
    try {
      body = response.json();
    } catch {
      return route.url === '/metrics' ? undefined : 'an error that is not JSON';
    }
    return shapeProblem(route, body);
  }

  it('never answers a 5xx, answers every error in its protocol, and keeps answering', {
    timeout: 120_000,
  }, async () => {
    const rng: Random = createRandom(SEED);
    const started = Date.now();
    const problems = new Map<string, string>();
    let sent = 0;
    let stopped = false;

    expect(routes.map((r) => `${r.method} ${r.url}`)).toEqual(
      expect.arrayContaining(['POST /v1/chat/completions', 'GET /v1/models', 'POST /pg/chat/completions']),
    );

    outer: for (let round = 0; round < CASES; round++) {
      for (const route of routes) {
        for (const name of ['anonymous', 'user', 'admin'] as const) {
          if (Date.now() - started > DEADLINE_MS) {
            stopped = true;
            break outer;
          }
          const base = VALID_BODIES[route.url];
          const hasBody = route.method === 'POST' || route.method === 'PUT';
          // A third of the bodies are the valid request itself, so the rest of each route is reached too.
          const body = !hasBody
            ? undefined
            : base && rng.chance(0.15)
              ? {
                  label: 'valid',
                  payload: JSON.stringify(base),
                  headers: { 'content-type': 'application/json' },
                }
              : hostileBody(rng, FIELDS, RELAY_BODY_LIMIT, base);
          const query = rng.chance(0.3) ? `?${hostileQuery(rng, FIELDS)}` : '';
          const url = `${fillParamsHostile(rng, route.url)}${query}`;
          const options: InjectOptions = {
            method: route.method as 'GET',
            url,
            headers: { ...callers[name], ...(body?.headers ?? {}) },
            ...(body ? { payload: body.payload } : {}),
          };
          const response = await t.relay.inject(options);
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
          if (sent % 200 === 0) {
            const models = await t.relay.inject({ method: 'GET', url: '/v1/models', headers: callers.user });
            expect(models.statusCode, `the relay stopped answering after ${sent} requests`).toBe(200);
          }
        }
      }
    }

    const models = await t.relay.inject({ method: 'GET', url: '/v1/models', headers: callers.user });
    expect(models.statusCode).toBe(200);
    console.info(
      `fuzz: ${sent} requests in ${Date.now() - started} ms, seed ${SEED}${stopped ? ', cut by the deadline' : ''}`,
    );
    expect(sent, `only ${sent} requests in ${DEADLINE_MS} ms`).toBeGreaterThan(routes.length * 3 * 2);
    const unexplained = [...problems.values()].filter(
      (report) => !KNOWN_ELSEWHERE.some(({ finding }) => finding.test(report)),
    );
    expect(unexplained, `seed ${SEED}, ${sent} requests${stopped ? ' (cut by the deadline)' : ''}`).toEqual(
      [],
    );
  });
});
