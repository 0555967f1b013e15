/**
 * A Turnpike cluster on one machine, as on Kubernetes but on loopback (docs/adr/0016): one `ROLE=api` process,
 * `relays` `ROLE=relay` processes behind a round-robin balancer, a Redis server of the cluster's own (so a test
 * can stop it), and a Postgres database. Every process is a real `node api/src/server.ts`, so signals, crashes
 * and restarts are the real thing. Used by the cluster tests and by `make cluster`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '@turnpike/core/testing/free-port';
import { startTestRedisServer, type TestRedisServer } from '@turnpike/core/testing/redis-server';

const SERVER = fileURLToPath(new URL('../server.ts', import.meta.url));

export interface ClusterProcess {
  readonly name: string;
  readonly url: string;
  readonly port: number;
  /** The running child, or undefined once it exited. */
  child(): ChildProcess | undefined;
  /** Sends a signal; resolves with the exit code once the process is gone. */
  signal(signal: NodeJS.Signals): Promise<number | null>;
  /** Starts it again on the same port and waits until it is ready. */
  restart(): Promise<void>;
  /** Whether the balancer sends it traffic (a pod in the Service's endpoints). */
  inRotation: boolean;
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
  readonly databaseUrl: string;
  close(): Promise<void>;
}

export interface ClusterOptions {
  readonly databaseUrl: string;
  readonly relays?: number;
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

function startProcess(name: string, port: number, env: Record<string, string>): ClusterProcess {
  let child: ChildProcess | undefined;
  let log = '';
  const launch = () => {
    const started = spawn(process.execPath, [SERVER], {
      env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const keep = (chunk: Buffer) => {
      log = (log + chunk.toString()).slice(-20_000);
    };
    started.stdout?.on('data', keep);
    started.stderr?.on('data', keep);
    started.once('exit', () => {
      if (child === started) child = undefined;
    });
    child = started;
  };
  launch();
  const url = `http://127.0.0.1:${port}`;
  return {
    name,
    url,
    port,
    inRotation: true,
    child: () => child,
    output: () => log,
    async signal(signal) {
      const running = child;
      if (!running) return null;
      const exited = new Promise<number | null>((resolve) => running.once('exit', (code) => resolve(code)));
      running.kill(signal);
      return exited;
    },
    async restart() {
      if (child) throw new Error(`${name} is still running`);
      launch();
      await waitUntilReady(url, 60_000, () => child === undefined);
      this.inRotation = true;
    },
  };
}

/**
 * Round-robin over the relays in rotation; a connection refused by one (a process just killed) is retried on
 * the next, as a Service would route away from a pod that is gone.
 */
function startBalancer(relays: readonly ClusterProcess[]): Promise<http.Server> {
  let next = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const candidates = relays.filter((r) => r.inRotation);
      const tryAt = (attempt: number) => {
        if (attempt >= candidates.length) {
          res.writeHead(502, { 'content-type': 'application/json' });
          res.end('{"error":{"message":"no relay answered","type":"balancer"}}');
          return;
        }
        next = (next + 1) % candidates.length;
        const target = candidates[next] as ClusterProcess;
        const upstream = http.request(
          { host: '127.0.0.1', port: target.port, method: req.method, path: req.url, headers: req.headers },
          (answer) => {
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(res);
          },
        );
        upstream.on('error', (error: NodeJS.ErrnoException) => {
          if (!res.headersSent && error.code === 'ECONNREFUSED') tryAt(attempt + 1);
          else res.destroy();
        });
        res.on('close', () => upstream.destroy());
        upstream.end(body);
      };
      tryAt(0);
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

export async function startCluster(options: ClusterOptions): Promise<Cluster> {
  const redis = await startTestRedisServer();
  const keyPrefix = `cluster-${randomBytes(4).toString('hex')}:`;
  const env: Record<string, string> = {
    DATABASE_URL: options.databaseUrl,
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
  const api = startProcess('api', await freePort(), { ...env, ROLE: 'api' });
  // The api migrates the database first; relays started together would only wait on its lock.
  await waitUntilReady(api.url, 60_000, () => api.child() === undefined);
  const relays: ClusterProcess[] = [];
  for (let i = 0; i < (options.relays ?? 3); i += 1)
    relays.push(startProcess(`relay-${i + 1}`, await freePort(), { ...env, ROLE: 'relay' }));
  await Promise.all(relays.map((r) => waitUntilReady(r.url, 60_000, () => r.child() === undefined)));
  const balancer = await startBalancer(relays);
  const { port } = balancer.address() as { port: number };
  return {
    api,
    relays,
    relayUrl: `http://127.0.0.1:${port}`,
    redis,
    keyPrefix,
    databaseUrl: options.databaseUrl,
    async close() {
      balancer.closeAllConnections();
      await new Promise((resolve) => balancer.close(resolve));
      await Promise.all([api, ...relays].map((p) => p.signal('SIGKILL')));
      await redis.close();
    },
  };
}
