/**
 * The embedded database (PGlite) in a worker thread of its own (pglite-worker.ts), and on this thread a client
 * with the part of PGlite's interface that drizzle's pglite driver calls: `query`, `exec`, `transaction`.
 *
 * PGlite runs Postgres as WebAssembly, synchronously, on the thread that owns it: in the process's main thread
 * every query (the consume logs' batched inserts, a console page's count) held up every request and stream of the
 * relay for as long as it ran (ADR 0036). Here the main thread only posts a message and awaits the answer.
 *
 * Guarantees kept from PGlite itself, which runs in the worker unchanged: one statement at a time; a transaction
 * holds PGlite's transaction lock from BEGIN to COMMIT or ROLLBACK, so no statement from outside it runs in between
 * (atomic and isolated as before); a statement sent on a transaction's handle runs in that transaction only.
 */

import { Worker } from 'node:worker_threads';
import type { Results } from '@electric-sql/pglite';
import { errorOf, type SerializedError } from './pglite-errors.ts';

/** What the worker is started with. */
export interface ThreadSetup {
  /** The data folder; absent: in memory. */
  dataDir?: string;
  /**
   * In memory only: a data folder dumped as a gzip tarball (PGlite's `dumpDataDir`) to start from instead of running
   * `initdb` (tests start from one migrated copy: core/src/testing/pglite-template.ts).
   */
  loadDataDir?: string;
  /** Postgres settings added to PGlite's default start parameters. */
  extraStartParams: string[];
}

interface StatementFields {
  id: number;
  /** The transaction the statement belongs to; absent: on its own. */
  tx?: number;
}

/** A message to the worker. `id` 0 is the worker's own "opened" (or "failed to open") answer. */
export type ThreadRequest =
  | (StatementFields & {
      op: 'query';
      sql: string;
      params: unknown[];
      rowMode?: 'array' | 'object';
      textTypes?: number[];
    })
  | (StatementFields & { op: 'exec'; sql: string })
  | { id: number; op: 'begin' }
  | { id: number; op: 'end'; tx: number; commit: boolean }
  | { id: number; op: 'close' };

export type ThreadReply =
  | { id: number; ok: true; value: unknown }
  | { id: number; ok: false; error: SerializedError };

interface QueryOptionsInput {
  rowMode?: 'array' | 'object';
  parsers?: Record<number, unknown>;
}

/** What drizzle's pglite session calls on the client and on a transaction. */
export interface PgliteThreadQueries {
  query<T>(sql: string, params?: unknown[], options?: QueryOptionsInput): Promise<Results<T>>;
  exec(sql: string): Promise<Results[]>;
}

export interface PgliteThreadTransaction extends PgliteThreadQueries {
  readonly closed: boolean;
}

export interface PgliteThreadClient extends PgliteThreadQueries {
  transaction<T>(run: (tx: PgliteThreadTransaction) => Promise<T>): Promise<T>;
  /** Closes the database cleanly (a checkpoint, the files written) and ends the thread. */
  close(): Promise<void>;
}

/**
 * Starts the worker and opens the database in it; resolves once it is ready. An error opening it (a data folder
 * that cannot be used, a damaged database) rejects with the worker's error, its `code` kept.
 */
export async function openPgliteThread(setup: ThreadSetup): Promise<PgliteThreadClient> {
  const worker = new Worker(new URL('./pglite-worker.ts', import.meta.url), {
    workerData: setup,
    // The thread's garbage is small and short-lived (statements and their rows); a young generation grown to the
    // process's cap (2 x 16 MiB, ADR 0030) would stay resident for nothing (ADR 0036).
    resourceLimits: { maxYoungGenerationSizeMb: 8 },
  });
  const pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  let lastId = 0;
  let stopped: Error | undefined;

  // The thread keeps the process alive only while an answer is awaited, like a socket with a query in flight: an
  // idle database does not hold a process that has nothing else to do.
  const settle = (id: number) => {
    const waiter = pending.get(id);
    pending.delete(id);
    if (pending.size === 0) worker.unref();
    return waiter;
  };
  worker.on('message', (message: ThreadReply) => {
    const waiter = settle(message.id);
    if (!waiter) return;
    if (message.ok) waiter.resolve(message.value);
    else waiter.reject(errorOf(message.error));
  });
  const stop = (error: Error) => {
    stopped ??= error;
    for (const [id, waiter] of pending) {
      pending.delete(id);
      waiter.reject(stopped);
    }
  };
  worker.on('error', (error) =>
    stop(new Error(`the embedded database's thread failed: ${error.message}`, { cause: error })),
  );
  worker.on('exit', (code) =>
    stop(new Error(`the embedded database's thread has stopped (exit code ${code})`)),
  );

  const send = <T>(request: ThreadRequest): Promise<T> => {
    if (stopped) return Promise.reject(stopped);
    return new Promise<T>((resolve, reject) => {
      if (pending.size === 0) worker.ref();
      pending.set(request.id, { resolve: resolve as (value: unknown) => void, reject });
      worker.postMessage(request);
    });
  };

  await new Promise<unknown>((resolve, reject) => {
    pending.set(0, { resolve, reject });
  }).catch(async (error: unknown) => {
    await worker.terminate();
    throw error;
  });

  const queriesOn = (tx?: number): PgliteThreadQueries => ({
    query: <T>(sql: string, params: unknown[] = [], options?: QueryOptionsInput) =>
      send<Results<T>>({
        id: ++lastId,
        op: 'query',
        sql,
        params,
        ...(tx === undefined ? {} : { tx }),
        ...(options?.rowMode ? { rowMode: options.rowMode } : {}),
        ...(options?.parsers ? { textTypes: Object.keys(options.parsers).map(Number) } : {}),
      }),
    exec: (sql: string) =>
      send<Results[]>({ id: ++lastId, op: 'exec', sql, ...(tx === undefined ? {} : { tx }) }),
  });

  return {
    ...queriesOn(),
    async transaction<T>(run: (tx: PgliteThreadTransaction) => Promise<T>): Promise<T> {
      const tx = await send<number>({ id: ++lastId, op: 'begin' });
      let closed = false;
      const handle: PgliteThreadTransaction = {
        ...queriesOn(tx),
        get closed() {
          return closed;
        },
      };
      let value: T;
      try {
        value = await run(handle);
      } catch (error) {
        closed = true;
        // The rollback's own failure (the thread gone) is not the caller's error: theirs is.
        await send({ id: ++lastId, op: 'end', tx, commit: false }).catch(() => {});
        throw error;
      }
      closed = true;
      await send({ id: ++lastId, op: 'end', tx, commit: true });
      return value;
    },
    async close() {
      if (stopped) return;
      await send({ id: ++lastId, op: 'close' });
      await worker.terminate();
    },
  };
}
