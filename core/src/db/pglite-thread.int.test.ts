import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Database } from './client.ts';

const rowsOf = <T>(result: unknown) => (result as { rows: T[] }).rows;
const count = async (database: Database) =>
  rowsOf<{ n: number }>(await database.db.execute(sql`select count(*)::int as n from things`))[0]?.n;

describe('the embedded database in its own thread', () => {
  let database: Database;
  beforeAll(async () => {
    database = await createDb({});
    await database.db.execute(sql`create table things (id int primary key, at timestamptz default now())`);
  });
  afterAll(async () => {
    await database?.close();
  });

  it('commits a transaction whole, and a failed one leaves nothing', async () => {
    await database.db.transaction(async (tx) => {
      await tx.execute(sql`insert into things (id) values (1)`);
      await tx.execute(sql`insert into things (id) values (2)`);
    });
    const failure = await database.db
      .transaction(async (tx) => {
        await tx.execute(sql`insert into things (id) values (3)`);
        await tx.execute(sql`insert into things (id) values (1)`);
      })
      .catch((error: unknown) => error);
    // The unique violation arrives with Postgres's fields, as it does from PGlite in the same thread.
    expect((failure as { cause?: { code?: string; constraint?: string } }).cause).toMatchObject({
      code: '23505',
      constraint: 'things_pkey',
    });
    expect(await count(database)).toBe(2);
    await database.db.execute(sql`delete from things`);
  });

  it('runs nothing from outside an open transaction until it ends (isolated, as PGlite in-process)', async () => {
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let inserted = () => {};
    const insertedOnce = new Promise<void>((resolve) => {
      inserted = resolve;
    });
    const transaction = database.db.transaction(async (tx) => {
      await tx.execute(sql`insert into things (id) values (10)`);
      inserted();
      await held;
      await tx.execute(sql`insert into things (id) values (11)`);
    });
    await insertedOnce;
    let outsideDone = false;
    const outside = count(database).then((n) => {
      outsideDone = true;
      return n;
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(outsideDone).toBe(false);
    release();
    await transaction;
    // It ran after the commit: it sees both rows, never one.
    expect(await outside).toBe(2);
    await database.db.execute(sql`delete from things`);
  });

  it('rolls back a nested transaction to its savepoint and keeps the outer one', async () => {
    await database.db.transaction(async (tx) => {
      await tx.execute(sql`insert into things (id) values (20)`);
      await tx
        .transaction(async (inner) => {
          await inner.execute(sql`insert into things (id) values (21)`);
          throw new Error('inner fails');
        })
        .catch(() => {});
    });
    const ids = rowsOf<{ id: number }>(await database.db.execute(sql`select id from things order by id`));
    expect(ids.map((row) => row.id)).toEqual([20]);
    await database.db.execute(sql`delete from things`);
  });

  it('keeps timestamps as Postgres text for drizzle to read (a function cannot cross threads)', async () => {
    await database.db.execute(sql`insert into things (id, at) values (30, '2026-01-02 03:04:05+00')`);
    const [row] = rowsOf<{ at: unknown }>(
      await database.db.execute(sql`select at from things where id = 30`),
    );
    expect(row?.at).toBe('2026-01-02 03:04:05+00');
    await database.db.execute(sql`delete from things`);
  });

  it('keeps concurrent writes apart: each of 200 parallel transactions is written exactly once', async () => {
    await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        database.db.transaction(async (tx) => {
          await tx.execute(sql`insert into things (id) values (${1000 + i})`);
        }),
      ),
    );
    expect(await count(database)).toBe(200);
    await database.db.execute(sql`delete from things`);
  });
});

describe('the embedded database on disk, in its thread', () => {
  const root = mkdtempSync(path.join(tmpdir(), 'turnpike-thread-'));
  const dataDir = path.join(root, 'db');
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('is closed cleanly, gives its lock back, and has every committed row when opened again', async () => {
    const first = await createDb({ dataDir });
    await first.db.execute(sql`create table things (id int primary key)`);
    await first.db.transaction(async (tx) => {
      await tx.execute(sql`insert into things values (1), (2)`);
    });
    await first.close();
    expect(existsSync(`${dataDir}.lock`)).toBe(false);
    // A query after close is refused, not left waiting.
    await expect(first.db.execute(sql`select 1`)).rejects.toThrow();

    const second = await createDb({ dataDir });
    try {
      expect(await count(second)).toBe(2);
    } finally {
      await second.close();
    }
  });
});
