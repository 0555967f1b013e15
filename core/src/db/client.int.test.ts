import { randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Database } from './client.ts';
import { isDatabaseUnreachable } from './unreachable.ts';

const rowsOf = (result: unknown) => (result as { rows: unknown[] }).rows;

const base = process.env.TEST_POSTGRES_URL;

/** Terminates every backend of `database` but the caller's (what a failover does to each connection). */
async function terminateBackends(adminUrl: string, database: string): Promise<number> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    const { rows } = await admin.query(
      'select pg_terminate_backend(pid) as done from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()',
      [database],
    );
    return rows.length;
  } finally {
    await admin.end();
  }
}

describe.skipIf(!base)('the Postgres pool when backends are terminated (failover)', () => {
  const name = `turnpike_pool_${randomBytes(5).toString('hex')}`;
  let database: Database;
  const lost: Error[] = [];

  beforeAll(async () => {
    const admin = new pg.Client({ connectionString: base });
    await admin.connect();
    await admin.query(`create database ${name}`);
    await admin.end();
    const url = new URL(base as string);
    url.pathname = `/${name}`;
    database = await createDb({
      url: url.toString(),
      maxConnections: 2,
      onConnectionError: (e) => lost.push(e),
    });
    await database.db.execute(sql`create table things (id int primary key)`);
  });
  afterAll(async () => {
    await database?.close();
    const admin = new pg.Client({ connectionString: base });
    await admin.connect();
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  });

  it('survives idle connections being terminated: the next queries open new ones', async () => {
    await Promise.all([1, 2].map(() => database.db.execute(sql`select 1`)));
    expect(await terminateBackends(base as string, name)).toBeGreaterThan(0);
    // The pool may hand out a connection whose termination it has not read yet: the first query may fail
    // with the connection's error, the next ones succeed.
    for (let i = 0; i < 5; i++) await database.db.execute(sql`select 1`).catch(() => undefined);
    expect(rowsOf(await database.db.execute(sql`select 2 as two`))[0]).toEqual({ two: 2 });
  });

  it('fails a transaction whose backend is terminated mid-way as unreachable, writes nothing, and keeps every pool slot', async () => {
    // More rounds than pool slots: a slot lost per broken transaction would exhaust the pool.
    for (let round = 0; round < 4; round++) {
      const failure = await database.db
        .transaction(async (tx) => {
          await tx.execute(sql`insert into things values (${round})`);
          await terminateBackends(base as string, name);
          // Let the termination arrive between two statements of the transaction.
          await new Promise((resolve) => setTimeout(resolve, 50));
          await tx.execute(sql`insert into things values (${round + 100})`);
        })
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      expect(isDatabaseUnreachable(failure)).toBe(true);
    }
    const rows = rowsOf(await database.db.execute(sql`select count(*)::int as n from things`));
    expect(rows[0]).toEqual({ n: 0 });
    expect(lost.length).toBeGreaterThan(0);
  });
});
