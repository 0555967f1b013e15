import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createDb, type Database } from '../../db/client.ts';
import { migrate } from '../../db/migrate.ts';

/**
 * A migrated Turnpike database for one test file: in-memory PGlite, or a database of its own on TEST_POSTGRES_URL.
 * `url` is set for Postgres, so the CLI can be pointed at it through DATABASE_URL.
 */
export async function createTargetDatabase(): Promise<{
  database: Database;
  url: string | undefined;
  drop(): Promise<void>;
}> {
  const base = process.env.TEST_POSTGRES_URL;
  if (!base) {
    const database = await createDb({});
    await migrate(database);
    return { database, url: undefined, drop: () => database.close() };
  }
  const name = `turnpike_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(base);
  url.pathname = `/${name}`;
  const database = await createDb({ url: url.toString(), maxConnections: 2 });
  await migrate(database);
  return {
    database,
    url: url.toString(),
    async drop() {
      await database.close();
      const client = new pg.Client({ connectionString: base });
      await client.connect();
      await client.query(`drop database if exists ${name} with (force)`);
      await client.end();
    },
  };
}
