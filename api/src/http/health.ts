/**
 * Liveness, readiness and draining, for every role (docs/adr/0016):
 * - `GET /healthz`: 200 while the process runs (a liveness probe restarts a process that stops answering);
 * - `GET /readyz`: 200 when the caches are loaded (the app is built only after), the database answers and Redis
 *   answers when configured; 503 with the failing checks otherwise, and from the moment the process drains. A
 *   process that serves from memory (`degradeAfterReady`: the relay) needs its dependencies to become ready, but
 *   once ready an outage of the database or Redis is reported (`degraded`, still 200) instead of failing: every
 *   relay would fail at once, and Kubernetes would take the whole tier out of service for an outage the relay
 *   rides through (the writer retries, the ledger degrades);
 * - while draining, a new request is answered 503 in its caller's protocol with `Connection: close`, and requests
 *   already running (streams included) go on until they end or the grace period runs out (server.ts).
 * The probes are cheap: each dependency is asked at most once a second, however often the kubelet asks.
 */
import { statfs } from 'node:fs/promises';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Db } from '@turnpike/core/db/client';
import { describeUnreachable } from '@turnpike/core/db/unreachable';
import { sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';

export interface Readiness {
  /** Starts draining: /readyz fails and new requests are refused from now on. */
  drain(): void;
  isDraining(): boolean;
  /** Failing checks that make the process unready, and those it rides through (`degraded`). */
  check(): Promise<{ failures: string[]; degraded: string[] }>;
}

const CHECK_TIMEOUT_MS = 2_000;
/** Less free space than this under DATA_DIR counts as a full disk: a settled call's record is about 1 KB. */
const DISK_FULL_BELOW_BYTES = 64 * 1024;
const CHECK_EVERY_MS = 1_000;

const withTimeout = <T>(promise: Promise<T>, ms: number): Promise<T> =>
  new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });

export function createReadiness(deps: {
  readonly db: Db;
  readonly redis?: Redis | undefined;
  /** Once ready, report dependency failures as degraded instead of failing (a relay serves from memory). */
  readonly degradeAfterReady?: boolean;
  /** DATA_DIR when the process writes there (the embedded database, the spool of settled calls): a full disk fails. */
  readonly dataDir?: string | undefined;
}): Readiness {
  let draining = false;
  let wasReady = false;
  let last: { at: number; failures: Promise<string[]> } | undefined;
  async function probe(): Promise<string[]> {
    const failures: string[] = [];
    await withTimeout(deps.db.execute(sql`select 1`), CHECK_TIMEOUT_MS).catch((error: unknown) =>
      failures.push(`database: ${describeUnreachable(error)}`),
    );
    if (deps.redis)
      await withTimeout(deps.redis.ping(), CHECK_TIMEOUT_MS).catch((error: unknown) =>
        failures.push(`redis: ${(error as Error).message}`),
      );
    if (deps.dataDir) {
      const disk = await statfs(deps.dataDir).catch(() => undefined);
      const free = disk ? disk.bavail * disk.bsize : undefined;
      if (free !== undefined && free < DISK_FULL_BELOW_BYTES)
        failures.push(`disk: no space left under DATA_DIR (${free} bytes free)`);
    }
    return failures;
  }
  return {
    drain() {
      draining = true;
    },
    isDraining: () => draining,
    async check() {
      if (draining) return { failures: ['draining'], degraded: [] };
      const now = Date.now();
      if (!last || now - last.at >= CHECK_EVERY_MS) last = { at: now, failures: probe() };
      const failures = await last.failures;
      if (failures.length === 0) wasReady = true;
      return wasReady && deps.degradeAfterReady
        ? { failures: [], degraded: failures }
        : { failures, degraded: [] };
    },
  };
}

/** `GET /healthz` and `GET /readyz` on `app`. */
export function registerHealthRoutes(app: FastifyInstance, readiness: Readiness): void {
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_request, reply) => {
    const { failures, degraded } = await readiness.check();
    if (failures.length > 0) return reply.code(503).send({ status: 'not ready', failures });
    return degraded.length > 0 ? { status: 'degraded', degraded } : { status: 'ready' };
  });
}

/** A 503 body in the protocol of the route the caller used. */
export function drainingBody(
  url: string,
  message = 'this server is shutting down; retry the request',
  code = 'server_draining',
): string {
  if (url.startsWith('/v1/messages'))
    return JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message } });
  if (url.startsWith('/v1beta'))
    return JSON.stringify({ error: { code: 503, message, status: 'UNAVAILABLE' } });
  if (url.startsWith('/v1') || url.startsWith('/pg') || url.startsWith('/dashboard'))
    return JSON.stringify({ error: { message, type: 'server_error', param: null, code } });
  return JSON.stringify({ success: false, message, data: null });
}

/**
 * Puts a gate in front of every request listener of `server`: once draining, a new request (a keep-alive
 * connection's next request included) gets a 503 in its protocol and the connection is closed after it.
 * `/healthz` and `/readyz` still answer, so the probes see the drain.
 */
export function installDrainGate(server: Server, readiness: Readiness): void {
  const listeners = server.listeners('request') as ((req: IncomingMessage, res: ServerResponse) => void)[];
  server.removeAllListeners('request');
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const url = req.url ?? '/';
    if (readiness.isDraining() && url !== '/healthz' && url !== '/readyz') {
      res.writeHead(503, {
        'content-type': 'application/json; charset=utf-8',
        connection: 'close',
        'retry-after': '1',
      });
      res.end(drainingBody(url));
      return;
    }
    for (const listener of listeners) listener(req, res);
  });
}
