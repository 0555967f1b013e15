/**
 * Loaded into a gateway with `node --import` by `BENCH_SLOW_CALLS=1` (bench/slow-calls.ts): records, in the
 * process's own clock made absolute (`performance.timeOrigin + performance.now()`, Unix ms), when each relayed call
 * (`/v1/…`) arrived and how long the server took to answer it, every GC pause, and every database query: of the
 * `pg` client on Postgres, of the embedded database's thread otherwise (the batched writer's flushes, mostly).
 * Written to `BENCH_SLOW_CALLS_FILE` when the process exits; nothing is read or sent while it runs.
 */
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import { PerformanceObserver, performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';

export interface SlowCallsData {
  /** [arrived, answered] per call, Unix ms. */
  readonly calls: [number, number][];
  /** [start, end] per GC pause, Unix ms. */
  readonly gcs: [number, number][];
  /** [sent, answered] per database query (pg, or a request to the embedded database's thread), Unix ms. */
  readonly queries: [number, number][];
}

const file = process.env.BENCH_SLOW_CALLS_FILE;
const origin = performance.timeOrigin;
const now = () => origin + performance.now();
const data: SlowCallsData = { calls: [], gcs: [], queries: [] };

if (file) {
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries())
      data.gcs.push([origin + entry.startTime, origin + entry.startTime + entry.duration]);
  }).observe({ entryTypes: ['gc'] });

  const emit = http.Server.prototype.emit as (
    this: http.Server,
    event: string,
    ...args: unknown[]
  ) => boolean;
  http.Server.prototype.emit = function (this: http.Server, event: string, ...args: unknown[]) {
    if (event === 'request') {
      const [request, response] = args as [http.IncomingMessage, http.ServerResponse];
      if (request.url?.startsWith('/v1/')) {
        const arrived = now();
        response.once('finish', () => data.calls.push([arrived, now()]));
      }
    }
    return emit.call(this, event, ...args);
  } as typeof http.Server.prototype.emit;

  try {
    const pg = createRequire(`${process.cwd()}/package.json`)('pg') as {
      Client: { prototype: { query: (...args: unknown[]) => unknown } };
    };
    const query = pg.Client.prototype.query;
    pg.Client.prototype.query = function (this: unknown, ...args: unknown[]) {
      const sent = now();
      const done = () => data.queries.push([sent, now()]);
      const last = args.at(-1);
      if (typeof last === 'function') {
        args[args.length - 1] = (...results: unknown[]) => {
          done();
          return (last as (...r: unknown[]) => unknown)(...results);
        };
        return query.apply(this, args);
      }
      const answer = query.apply(this, args);
      if (answer instanceof Promise) answer.then(done, done);
      return answer;
    };
  } catch {
    // No pg in this process's reach: its database is another kind.
  }

  // The embedded database answers each request of its thread (`{ id, … }`) with one reply of the same id
  // (core/src/db/pglite-thread.ts).
  const sentAt = new Map<number, number>();
  const post = Worker.prototype.postMessage;
  Worker.prototype.postMessage = function (this: Worker, message: unknown, ...rest: unknown[]) {
    const id = (message as { id?: unknown } | undefined)?.id;
    if (typeof id === 'number') sentAt.set(id, now());
    return (post as (this: Worker, ...args: unknown[]) => void).call(this, message, ...rest);
  } as typeof post;
  const emitOfWorker = Worker.prototype.emit as (this: Worker, event: string, ...args: unknown[]) => boolean;
  Worker.prototype.emit = function (this: Worker, event: string, ...args: unknown[]) {
    if (event === 'message') {
      const id = (args[0] as { id?: unknown } | undefined)?.id;
      const sent = typeof id === 'number' ? sentAt.get(id) : undefined;
      if (sent !== undefined) {
        sentAt.delete(id as number);
        data.queries.push([sent, now()]);
      }
    }
    return emitOfWorker.call(this, event, ...args);
  } as typeof Worker.prototype.emit;

  process.on('exit', () => writeFileSync(file, JSON.stringify(data)));
}
