import type { PGlite } from '@electric-sql/pglite';
import type { ExtractTablesWithRelations } from 'drizzle-orm';
import { drizzle as drizzleNodePg } from 'drizzle-orm/node-postgres';
import type { PgDatabase, PgQueryResultHKT, PgTransaction } from 'drizzle-orm/pg-core';
import pg from 'pg';
import { DataDirError, dataDirErrorOf, lockDataDir } from './data-dir.ts';
import * as schema from './schema/index.ts';

export type Schema = typeof schema;

/** One database type for Postgres (pg pool) and embedded PGlite, so repos never know which they talk to. */
export type Db = PgDatabase<PgQueryResultHKT, Schema>;
export type Tx = PgTransaction<PgQueryResultHKT, Schema, ExtractTablesWithRelations<Schema>>;
/** Anything a repo method can run a query on: the database or an open transaction. */
export type Executor = Db | Tx;

export type DatabaseKind = 'postgres' | 'pglite';

export interface Database {
  readonly db: Db;
  readonly kind: DatabaseKind;
  /** The Postgres URL, for work that needs a connection of its own (migration lock, LISTEN). */
  readonly url?: string;
  close(): Promise<void>;
}

export interface CreateDbOptions {
  /** postgres:// URL; absent → embedded PGlite. */
  url?: string | undefined;
  /** PGlite data folder; absent (with no url) → in memory, for tests. */
  dataDir?: string | undefined;
  /** In memory: start from this dumped data folder (a gzip tarball) rather than an empty one. */
  template?: string | undefined;
  /** Pool size for Postgres. */
  maxConnections?: number;
  /** Told when an idle pooled connection is lost (a failover, a restart); the pool replaces it. */
  onConnectionError?: (error: Error) => void;
}

/**
 * How long a query waits for a connection (a new one, or a free one of a full pool) before it fails with
 * "timeout exceeded when trying to connect": without it, a database whose packets are dropped (a failed-over
 * address, a cut network) leaves every query hanging for the kernel's TCP timeout (minutes).
 */
const CONNECT_TIMEOUT_MS = 10_000;

/**
 * The embedded database: PGlite in a worker thread of its own (pglite-thread.ts, ADR 0036), so its queries, which
 * run synchronously in WebAssembly, leave the event loop that serves requests, and drizzle's pglite driver over
 * the thread's client. Loaded only by a process that uses the embedded database (a relay on Postgres never holds
 * them). Postgres runs with a smaller buffer cache: its default `shared_buffers` (128 MB) lives in the process's
 * own WebAssembly memory, where every page it ever touched stays resident. The embedded database serves one
 * process's small installation; the files it reads stay in the operating system's page cache anyway
 * (bench/README.md "Memory"). The thread loads pg_trgm, the one extension it needs (the keyword search's trigram
 * index: migration 0012, docs/adr/0031). A new data folder is made and migrated by a short-lived process first
 * (pglite-initdb.ts), so what making it leaves resident is not kept by this one.
 */
async function openPglite(
  dataDir?: string,
  template?: string,
): Promise<{ db: Db; close: () => Promise<void> }> {
  const [{ openPgliteThread }, { drizzle }] = await Promise.all([
    import('./pglite-thread.ts'),
    import('drizzle-orm/pglite'),
  ]);
  const extraStartParams = ['-c', 'shared_buffers=16MB'];
  if (dataDir !== undefined) {
    const { isNewDataDir, makeDataDir } = await import('./pglite-initdb.ts');
    if (isNewDataDir(dataDir)) await makeDataDir({ dataDir, extraStartParams });
  }
  const client = await openPgliteThread({
    ...(dataDir === undefined ? {} : { dataDir }),
    ...(template === undefined ? {} : { loadDataDir: template }),
    extraStartParams,
  });
  // The thread's client has the part of PGlite's interface the driver calls (query, exec, transaction).
  const db = drizzle({ client: client as unknown as PGlite, schema }) as unknown as Db;
  return { db, close: () => client.close() };
}

export async function createDb(options: CreateDbOptions): Promise<Database> {
  if (options.url) {
    const pool = new pg.Pool({
      connectionString: options.url,
      max: options.maxConnections ?? 10,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      // TCP keep-alive finds a connection to a primary that vanished without a reset (a failover).
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
    });
    // An idle client losing its connection (pg_terminate_backend, a restart) emits 'error' on the pool: without
    // a listener Node would crash the process. The pool drops that client and opens a new one when needed.
    pool.on('error', (error) => options.onConnectionError?.(error));
    keepCheckedOutClientsSafe(pool, options.onConnectionError);
    const db = drizzleNodePg({ client: pool, schema }) as unknown as Db;
    return { db, kind: 'postgres', url: options.url, close: () => pool.end() };
  }
  if (!options.dataDir) {
    const opened = await openPglite(undefined, options.template);
    return { db: opened.db, kind: 'pglite', close: opened.close };
  }
  const dataDir = options.dataDir;
  const unlock = await lockDataDir(dataDir);
  let opened: Awaited<ReturnType<typeof openPglite>>;
  try {
    opened = await openPglite(dataDir);
  } catch (error) {
    unlock();
    throw (
      dataDirErrorOf(error, dataDir) ??
      new DataDirError(
        `the embedded database in ${dataDir} (DATA_DIR) could not be opened: ${(error as Error).message}`,
        dataDir,
        { cause: error },
      )
    );
  }
  return {
    db: opened.db,
    kind: 'pglite',
    async close() {
      try {
        await opened.close();
      } finally {
        unlock();
      }
    },
  };
}

/**
 * A client checked out of the pool (a transaction holds one) has no 'error' listener of the pool's: when its
 * connection is lost between two queries, or at the end of one (a failover, `pg_terminate_backend`), the client
 * emits 'error' and Node would crash the process. Each client gets a listener of its own. A checked-out client
 * whose connection is lost is released with the error, so the pool drops it (a transaction whose `begin` failed
 * is never released by drizzle, and the pool would lose that slot for good); the holder's own later release is
 * then a no-op. The query in flight fails with the connection's error, which callers treat as the database being
 * unreachable: nothing is retried here, so nothing is written twice.
 */
function keepCheckedOutClientsSafe(pool: pg.Pool, onError?: (error: Error) => void): void {
  const checkedOut = new Set<pg.PoolClient>();
  pool.on('acquire', (client) => checkedOut.add(client));
  pool.on('release', (_error, client) => checkedOut.delete(client));
  pool.on('remove', (client) => checkedOut.delete(client as pg.PoolClient));
  pool.on('connect', (client) => {
    const lost = (error: Error) => {
      const held = client as pg.PoolClient;
      if (!checkedOut.has(held)) return; // idle: the pool's own listener removes it
      checkedOut.delete(held);
      onError?.(error);
      const release = held.release;
      let released = false;
      held.release = () => {
        if (released) return;
        released = true;
        release(error);
      };
      held.release();
    };
    client.on('error', lost);
    client.on('end', () => lost(new Error('the database connection was lost')));
  });
}
