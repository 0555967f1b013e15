import { fileURLToPath } from 'node:url';
import { drizzle as drizzleNodePg } from 'drizzle-orm/node-postgres';
import { migrate as migrateNodePg } from 'drizzle-orm/node-postgres/migrator';
import type { PgliteDatabase } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import pg from 'pg';
import type { Database } from './client.ts';

/** The committed drizzle-kit migrations. */
export const migrationsFolder = fileURLToPath(new URL('../../migrations', import.meta.url));
const MIGRATION_LOCK = 738215001;

/** Applies the committed drizzle-kit migrations; safe on every boot and from replicas booting together. */
export async function migrate(database: Database): Promise<void> {
  if (database.kind === 'pglite') {
    await migratePglite(database.db as unknown as PgliteDatabase, { migrationsFolder });
    return;
  }
  const client = new pg.Client({ connectionString: database.url, connectionTimeoutMillis: 10_000 });
  // A connection lost while migrating fails the query in flight (the caller waits and tries again); the
  // client's own 'error' event must not crash the process.
  client.on('error', () => {});
  await client.connect();
  try {
    await client.query('select pg_advisory_lock($1)', [MIGRATION_LOCK]);
    await migrateNodePg(drizzleNodePg({ client }), { migrationsFolder });
  } finally {
    await client.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => {});
    await client.end();
  }
}
