/**
 * One build's all-in-one process (`ROLE=all`: the console API and the relay on one port) as an operator starts it,
 * for the whole cost of a call (bench/cost.ts): the build's own server entry from its `.ts` sources, with the
 * production node flag and allocator setting (Dockerfile, `make run`), on the database and Redis it is given, or on
 * the embedded default (PGlite in a temporary DATA_DIR, no Redis). It is set up as an operator would through the
 * console API, which has kept its shape across the builds (first-run setup, root's quota, the bench model's price,
 * one OpenAI channel at the fake upstream, one unlimited token), so any commit can be measured without the
 * bench reaching into its modules.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Build } from './builds.ts';
import { freePort } from './services.ts';

export const COST_MODEL = 'gpt-4o-mini';
const ROOT = { username: 'root', password: 'bench-root-pass-1' };
/** Enough for any run: a call of the bench costs a few units. */
const ROOT_QUOTA = 1_000_000_000_000;

export interface Gateway {
  readonly pid: number;
  readonly url: string;
  /** `sk-…`, the token the load is sent with. */
  readonly token: string;
  stop(): Promise<void>;
}

interface ApiAnswer {
  success: boolean;
  message?: string;
  data?: unknown;
}

/** A console client: the session cookie and the New-Api-User header, as the console sends them. */
function consoleClient(base: string) {
  let cookie = '';
  let userId: number | undefined;
  async function call(method: string, route: string, body?: unknown): Promise<ApiAnswer> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (cookie) headers.cookie = cookie;
    if (userId !== undefined) headers['new-api-user'] = String(userId);
    const answer = await fetch(`${base}${route}`, {
      method,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const session = answer.headers
      .getSetCookie()
      .map((line) => line.split(';')[0] as string)
      .find((pair) => pair.startsWith('session='));
    if (session) cookie = session;
    const json = (await answer.json()) as ApiAnswer;
    if (!json.success) throw new Error(`${method} ${route}: ${json.message ?? answer.status}`);
    return json;
  }
  return {
    call,
    signIn(id: number) {
      userId = id;
    },
  };
}

/** First-run setup, root's quota, the model's price, a channel at `upstream`; returns a new unlimited token. */
async function setUp(base: string, upstream: string): Promise<string> {
  const api = consoleClient(base);
  await api.call('POST', '/api/setup', { ...ROOT, confirmPassword: ROOT.password });
  const login = await api.call('POST', '/api/user/login', ROOT);
  const rootId = (login.data as { id: number }).id;
  api.signIn(rootId);
  await api.call('PUT', '/api/user/', { id: rootId, quota: ROOT_QUOTA });
  // The bench's price since it was written (bench/relay-main.ts), the same for every build.
  await api.call('PUT', '/api/option/', {
    key: 'ModelRatio',
    value: JSON.stringify({ [COST_MODEL]: 0.075 }),
  });
  await api.call('PUT', '/api/option/', {
    key: 'CompletionRatio',
    value: JSON.stringify({ [COST_MODEL]: 4 }),
  });
  await api.call('POST', '/api/channel/', {
    name: 'fake upstream',
    type: 1,
    key: 'sk-bench-upstream',
    base_url: upstream,
    models: COST_MODEL,
    group: 'default',
  });
  const token = await api.call('POST', '/api/token/', {
    name: 'bench',
    unlimited_quota: true,
    remain_quota: 0,
    expired_time: -1,
  });
  const key = (token.data as { key?: string } | undefined)?.key;
  if (!key) throw new Error('the new token came back without its key');
  return key.startsWith('sk-') ? key : `sk-${key}`;
}

/** Polls until `check` holds, or fails after `ms`. */
async function waitFor(what: string, ms: number, check: () => Promise<boolean>, child: ChildProcess) {
  const deadline = Date.now() + ms;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`the gateway exited (${child.exitCode ?? child.signalCode}) before ${what}`);
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`the gateway did not reach "${what}" within ${ms / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The body every call of the bench sends: a short non-stream chat, as in make bench. */
export const COST_CHAT_BODY = JSON.stringify({
  model: COST_MODEL,
  messages: [{ role: 'user', content: 'Say hello.' }],
});

export async function startGateway(
  build: Build,
  services: { databaseUrl?: string; redisUrl?: string },
  upstream: string,
): Promise<Gateway> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'turnpike-cost-gw-'));
  const port = await freePort();
  // Its log (the request log at info, as deployed) goes nowhere unless asked for: a file would add its writes.
  const logDir = process.env.COST_GATEWAY_LOG;
  const log = logDir
    ? openSync(path.join(logDir, `${build.label.replace(/\W+/g, '-')}-${Date.now()}.log`), 'a')
    : 'ignore';
  // Only what the process needs: no DATABASE_URL or REDIS_URL of the shell leaks into a build that must not have one.
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? os.homedir(),
    NODE_ENV: 'production',
    GLIBC_TUNABLES: 'glibc.malloc.mmap_threshold=65536',
    ROLE: 'all',
    HOST: '127.0.0.1',
    PORT: String(port),
    DATA_DIR: dataDir,
    LOG_LEVEL: 'info',
    SESSION_SECRET: 'bench-session-secret-0123456789',
    CRYPTO_SECRET: 'bench-crypto-secret-0123456789',
    ...(services.databaseUrl ? { DATABASE_URL: services.databaseUrl } : {}),
    ...(services.redisUrl ? { REDIS_URL: services.redisUrl } : {}),
  };
  // COST_NODE_FLAGS adds flags for a look inside (`--cpu-prof --cpu-prof-dir=…`), for both builds alike.
  const extraFlags = (process.env.COST_NODE_FLAGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, ['--max-semi-space-size=16', ...extraFlags, build.entry], {
    cwd: build.dir,
    env,
    stdio: ['ignore', log, log],
  });
  if (typeof log === 'number') closeSync(log);
  const pid = child.pid;
  if (pid === undefined) throw new Error('the gateway did not start');
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    await waitFor('ready', 180_000, async () => (await fetch(`${url}/readyz`)).ok, child);
    const token = await setUp(url, upstream);
    // The channel and token reach the relay's caches through their change events: wait for a call to pass.
    await waitFor(
      'a first call answered',
      10_000,
      async () =>
        (
          await fetch(`${url}/v1/chat/completions`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
            body: COST_CHAT_BODY,
          })
        ).ok,
      child,
    );
    return { pid, url, token, stop };
  } catch (error) {
    await stop();
    throw new Error(
      `${build.label}: ${error instanceof Error ? error.message : String(error)}` +
        (logDir ? '' : ' (COST_GATEWAY_LOG=<folder> keeps its log)'),
    );
  }
}
