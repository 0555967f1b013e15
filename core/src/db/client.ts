import { mkdir } from 'node:fs/promises';
import { PGlite } from '@electric-sql/pglite';
import type { ExtractTablesWithRelations } from 'drizzle-orm';
import { drizzle as drizzleNodePg } from 'drizzle-orm/node-postgres';
import type { PgDatabase, PgQueryResultHKT, PgTransaction } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import pg from 'pg';
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
  /** Pool size for Postgres. */
  maxConnections?: number;
}

export async function createDb(options: CreateDbOptions): Promise<Database> {
  if (options.url) {
    const pool = new pg.Pool({ connectionString: options.url, max: options.maxConnections ?? 10 });
    // A client losing its connection (an outage, a failover) must not crash the process: idle ones are replaced
    // by the pool, and one that is checked out (between the statements of a transaction) fails its next query
    // instead of throwing here. A checked-out client is also given back to the pool as broken at once: a
    // transaction whose `begin` fails never releases its client (drizzle's node-postgres session), and ten such
    // failures would leave the pool with no client for good.
    const checkedOut = new Set<pg.PoolClient>();
    pool.on('acquire', (client) => checkedOut.add(client));
    pool.on('release', (_error, client) => checkedOut.delete(client));
    pool.on('error', () => {});
    pool.on('connect', (client) => {
      const lost = (error?: Error) => {
        if (!checkedOut.has(client)) return;
        client.release(error ?? new Error('the database connection was lost'));
        // Whoever holds it may still release it (a transaction's `finally`): that is a no-op now.
        client.release = () => {};
      };
      client.on('error', lost);
      client.on('end', () => lost());
    });
    const db = drizzleNodePg({ client: pool, schema }) as unknown as Db;
    return { db, kind: 'postgres', url: options.url, close: () => pool.end() };
  }
  if (options.dataDir) await mkdir(options.dataDir, { recursive: true });
  const client = options.dataDir ? new PGlite(options.dataDir) : new PGlite();
  await client.waitReady;
  const db = drizzlePglite({ client, schema }) as unknown as Db;
  return { db, kind: 'pglite', close: () => client.close() };
}
