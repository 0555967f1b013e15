/**
 * A Turnpike cluster on one machine, as on Kubernetes but on loopback (docs/adr/0016): one `ROLE=api` process,
 * `relays` `ROLE=relay` processes behind a round-robin balancer, a Redis server of the cluster's own (so a test
 * can stop it), and a Postgres database. Every process is a real `node server/src/main.ts`, so signals, crashes
 * and restarts are the real thing. Used by the cluster tests and by `make cluster`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '@turnpike/core/testing/free-port';
import { startTestRedisServer, type TestRedisServer } from '@turnpike/core/testing/redis-server';
import { startTcpProxy, type TcpProxy } from '@turnpike/core/testing/tcp-proxy';

const SERVER = fileURLToPath(new URL('../main.ts', import.meta.url));

/** One end of a process: its exit code (null when a signal ended it) and whether a test asked for it. */
export interface ProcessExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** Milliseconds since the Unix epoch. */
  readonly at: number;
  /** Sent by the test (`signal()`) rather than the process's own doing: a crash is an exit nobody asked for. */
  readonly asked: boolean;
}

export interface ClusterProcess {
  readonly name: string;
  readonly url: string;
  readonly port: number;
  /** The running child, or undefined once it exited. */
  child(): ChildProcess | undefined;
  /** Sends a signal; resolves with the exit code once the process is gone. */
  signal(signal: NodeJS.Signals): Promise<number | null>;
  /** Starts it again on the same port, with `env` added from now on (a test's clock offset), and waits until ready. */
  restart(env?: Record<string, string>): Promise<void>;
  /** Whether the balancer sends it traffic (a pod in the Service's endpoints). */
  inRotation: boolean;
  /**
   * Started again this long (ms) after any exit, as Kubernetes restarts a pod's container; undefined: left down.
   * A test sets it for the time it counts crashes.
   */
  restartAfterMs: number | undefined;
  /** Every exit since the cluster started, in order. */
  exits(): readonly ProcessExit[];
  /** The signals the test sent, when it sent them (an exit is seen a moment later). */
  signalsSent(): readonly { readonly signal: NodeJS.Signals; readonly at: number }[];
  /** How many times it was started again (by `restart()` or by the restart policy). */
  restarts(): number;
  /** What it printed (warnings and errors), for a failing test to show. */
  output(): string;
}

export interface Cluster {
  readonly api: ClusterProcess;
  readonly relays: readonly ClusterProcess[];
  /** The balancer in front of the relays. */
  readonly relayUrl: string;
  readonly redis: TestRedisServer;
  readonly keyPrefix: string;
  /** The database as the test reaches it (directly, never through the proxy). */
  readonly databaseUrl: string;
  /** The proxy between the processes and Postgres, with `postgresProxy`. */
  readonly postgres: TcpProxy | undefined;
  close(): Promise<void>;
}

export interface ClusterOptions {
  readonly databaseUrl: string;
  readonly relays?: number;
  /**
   * Every process reaches Postgres through a TCP proxy the test controls (`Cluster.postgres`), so a test can take
   * the database away (refuse and reset connections) without stopping the server other tests share.
   */
  readonly postgresProxy?: boolean;
  /** More environment for every process. */
  readonly env?: Record<string, string>;
}

/** Polls `GET /readyz` until it answers 200. */
export async function waitUntilReady(url: string, ms = 60_000, exited?: () => boolean): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    const ready = await fetch(`${url}/readyz`)
      .then((r) => r.status === 200)
      .catch(() => false);
    if (ready) return;
    if (exited?.()) throw new Error(`${url} exited before it was ready`);
    if (Date.now() > deadline) throw new Error(`${url} was not ready within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * One real `node server/src/main.ts` on `port` with `env` added to this process's environment; `kill()` ends it for
 * good (no restart after it).
 */
export function startServerProcess(
  name: string,
  port: number,
  env: Record<string, string>,
): ClusterProcess & { kill(): Promise<void> } {
  let child: ChildProcess | undefined;
  let log = '';
  let closing = false;
  let askedFor: ChildProcess | undefined;
  const signalsSent: { signal: NodeJS.Signals; at: number }[] = [];
  let pendingRestart: NodeJS.Timeout | undefined;
  const exits: ProcessExit[] = [];
  let restarts = 0;
  const url = `http://127.0.0.1:${port}`;
  let ownEnv = env;
  const launch = () => {
    const merged: NodeJS.ProcessEnv = { ...process.env, ...ownEnv, PORT: String(port), HOST: '127.0.0.1' };
    // An empty value removes the variable (a server without DATABASE_URL opens the embedded database).
    for (const [key, value] of Object.entries(ownEnv)) if (value === '') delete merged[key];
    const started = spawn(process.execPath, [SERVER], {
      env: merged,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const keep = (chunk: Buffer) => {
      log = (log + chunk.toString()).slice(-20_000);
    };
    started.stdout?.on('data', keep);
    started.stderr?.on('data', keep);
    started.once('exit', (code, signal) => {
      exits.push({ code, signal, at: Date.now(), asked: askedFor === started });
      if (child === started) child = undefined;
      if (!closing && proc.restartAfterMs !== undefined && pendingRestart === undefined) {
        pendingRestart = setTimeout(() => {
          pendingRestart = undefined;
          if (closing || child || proc.restartAfterMs === undefined) return;
          restarts += 1;
          launch();
        }, proc.restartAfterMs);
      }
    });
    child = started;
  };
  launch();
  const proc: ClusterProcess & { kill(): Promise<void> } = {
    name,
    url,
    port,
    inRotation: true,
    restartAfterMs: undefined,
    child: () => child,
    output: () => log,
    exits: () => exits,
    signalsSent: () => signalsSent,
    restarts: () => restarts,
    async signal(signal) {
      const running = child;
      if (!running) return null;
      const exited = new Promise<number | null>((resolve) => running.once('exit', (code) => resolve(code)));
      askedFor = running;
      signalsSent.push({ signal, at: Date.now() });
      running.kill(signal);
      return exited;
    },
    async restart(added) {
      if (child) throw new Error(`${name} is still running`);
      if (added) ownEnv = { ...ownEnv, ...added };
      clearTimeout(pendingRestart);
      pendingRestart = undefined;
      restarts += 1;
      launch();
      await waitUntilReady(url, 60_000, () => child === undefined);
      this.inRotation = true;
    },
    /** For close(): no restart after it. */
    async kill() {
      closing = true;
      clearTimeout(pendingRestart);
      await this.signal('SIGKILL');
    },
  };
  return proc;
}

/**
 * Round-robin over the relays in rotation and ready, as a Service routes to the ready pods of its endpoints: each
 * relay's `/readyz` is probed every 250 ms (a probe that times out keeps the last verdict, as a kubelet's
 * failureThreshold would for one slow answer). A connection refused by one (a process just killed) is retried on
 * the next, as a Service would route away from a pod that is gone.
 */
function startBalancer(relays: readonly ClusterProcess[]): Promise<http.Server & { stopProbes(): void }> {
  let next = 0;
  const notReady = new Set<ClusterProcess>();
  const probe = async (relay: ClusterProcess) => {
    try {
      const answer = await fetch(`${relay.url}/readyz`, { signal: AbortSignal.timeout(1_000) });
      if (answer.status === 200) notReady.delete(relay);
      else notReady.add(relay);
    } catch (error) {
      if ((error as Error).name !== 'TimeoutError') notReady.add(relay);
    }
  };
  const probes = setInterval(() => {
    for (const relay of relays) void probe(relay);
  }, 250);
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const candidates = relays.filter((r) => r.inRotation && !notReady.has(r));
      // Each candidate once, from the next in turn (other requests move the turn meanwhile).
      next = (next + 1) % Math.max(1, candidates.length);
      const first = next;
      const tryAt = (attempt: number) => {
        if (attempt >= candidates.length) {
          res.writeHead(502, { 'content-type': 'application/json' });
          res.end('{"error":{"message":"no relay answered","type":"balancer"}}');
          return;
        }
        const target = candidates[(first + attempt) % candidates.length] as ClusterProcess;
        const upstream = http.request(
          {
            host: '127.0.0.1',
            port: target.port,
            method: req.method,
            path: req.url,
            headers: req.headers,
            agent: false,
          },
          (answer) => {
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(res);
          },
        );
        // A refused (or reset while connecting) connection is retried on the next relay, as a proxy of a Service does; a request cut after it
        // reached a relay is not (it may have been served). One connection per request, so a relay killed since the
        // last one is a refusal, not a reset of a kept-alive connection.
        upstream.on('error', (error: NodeJS.ErrnoException) => {
          const unsent =
            error.code === 'ECONNREFUSED' || (error.code === 'ECONNRESET' && error.syscall === 'connect');
          if (!res.headersSent && unsent) tryAt(attempt + 1);
          else res.destroy();
        });
        res.on('close', () => upstream.destroy());
        upstream.end(body);
      };
      tryAt(0);
    });
  });
  const stopProbes = () => clearInterval(probes);
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(Object.assign(server, { stopProbes }))),
  );
}

export async function startCluster(options: ClusterOptions): Promise<Cluster> {
  const redis = await startTestRedisServer();
  const postgres = options.postgresProxy ? await startTcpProxy(options.databaseUrl) : undefined;
  const keyPrefix = `cluster-${randomBytes(4).toString('hex')}:`;
  const env: Record<string, string> = {
    DATABASE_URL: postgres ? postgres.urlThrough(options.databaseUrl) : options.databaseUrl,
    REDIS_URL: redis.url,
    REDIS_KEY_PREFIX: keyPrefix,
    SESSION_SECRET: 'cluster-session-secret-0123456789',
    CRYPTO_SECRET: 'cluster-crypto-secret-0123456789',
    DATA_DIR: path.join(os.tmpdir(), `turnpike-cluster-${randomBytes(4).toString('hex')}`),
    LOG_LEVEL: 'warn',
    GLOBAL_API_RATE_LIMIT_ENABLE: 'false',
    CRITICAL_RATE_LIMIT_ENABLE: 'false',
    ...options.env,
  };
  const api = startServerProcess('api', await freePort(), { ...env, ROLE: 'api' });
  const relays: ReturnType<typeof startServerProcess>[] = [];
  try {
    // The api migrates the database first; relays started together would only wait on its lock.
    await waitUntilReady(api.url, 60_000, () => api.child() === undefined);
    for (let i = 0; i < (options.relays ?? 3); i += 1)
      relays.push(startServerProcess(`relay-${i + 1}`, await freePort(), { ...env, ROLE: 'relay' }));
    await Promise.all(relays.map((r) => waitUntilReady(r.url, 60_000, () => r.child() === undefined)));
  } catch (error) {
    // A cluster that never came up leaves nothing running behind the failed test.
    await Promise.all([api, ...relays].map((p) => p.kill()));
    await redis.close();
    await postgres?.close();
    throw error;
  }
  const balancer = await startBalancer(relays);
  const { port } = balancer.address() as { port: number };
  return {
    api,
    relays,
    relayUrl: `http://127.0.0.1:${port}`,
    redis,
    keyPrefix,
    databaseUrl: options.databaseUrl,
    postgres,
    async close() {
      balancer.stopProbes();
      balancer.closeAllConnections();
      await new Promise((resolve) => balancer.close(resolve));
      await Promise.all([api, ...relays].map((p) => p.kill()));
      await redis.close();
      await postgres?.close();
    },
  };
}

/**
 * Merges `figures` into test-results/cluster-figures.json, so each cluster test file adds its own figures beside
 * the others' instead of replacing them.
 */
export function recordClusterFigures(figures: Record<string, unknown>): void {
  const results = new URL('../../../test-results/', import.meta.url);
  mkdirSync(results, { recursive: true });
  const file = new URL('cluster-figures.json', results);
  let previous: Record<string, unknown> = {};
  try {
    previous = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  } catch {
    // none yet, or unreadable: start again
  }
  writeFileSync(file, `${JSON.stringify({ ...previous, ...figures }, null, 2)}\n`);
}

/** Runs the first-run setup on the cluster's api and signs in as root: the headers of a script's access token. */
export async function signInAsRoot(
  apiUrl: string,
  root: { username: string; password: string },
): Promise<Record<string, string>> {
  await fetch(`${apiUrl}/api/setup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ...root, confirmPassword: root.password }),
  });
  const login = await fetch(`${apiUrl}/api/user/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(root),
  });
  const { data: me } = (await login.json()) as { data: { id: number } };
  const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0] as string;
  const token = (await (
    await fetch(`${apiUrl}/api/user/token`, { headers: { cookie, 'new-api-user': String(me.id) } })
  ).json()) as { data: string };
  return { authorization: token.data, 'new-api-user': String(me.id) };
}

/** An /api caller with a script's access token: resolves with `data`, throws with the message on a failure. */
export function consoleApi(apiUrl: () => string, headers: () => Record<string, string>) {
  return async (method: string, path: string, body?: unknown): Promise<unknown> => {
    const response = await fetch(`${apiUrl()}${path}`, {
      method,
      headers: { ...headers(), 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const json = (await response.json()) as { success: boolean; message: string; data: unknown };
    if (!json.success) throw new Error(`${method} ${path}: ${json.message}`);
    return json.data;
  };
}
