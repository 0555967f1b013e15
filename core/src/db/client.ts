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
    // An idle client losing its connection must not crash the process; the pool replaces it.
    pool.on('error', () => {});
    const db = drizzleNodePg({ client: pool, schema }) as unknown as Db;
    return { db, kind: 'postgres', url: options.url, close: () => pool.end() };
  }
  if (options.dataDir) await mkdir(options.dataDir, { recursive: true });
  const client = options.dataDir ? new PGlite(options.dataDir) : new PGlite();
  await client.waitReady;
  const db = drizzlePglite({ client, schema }) as unknown as Db;
  return { db, kind: 'pglite', close: () => client.close() };
}
