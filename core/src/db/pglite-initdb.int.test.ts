import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import { createDb } from './client.ts';
import { migrationsFolder } from './migrate.ts';
import { isNewDataDir, makeDataDir } from './pglite-initdb.ts';

const rowsOf = <T>(result: unknown) => (result as { rows: T[] }).rows;
const committedMigrations = readdirSync(migrationsFolder).filter((name) => name.endsWith('.sql')).length;

describe('a new embedded data folder, made in a process of its own', () => {
  const root = mkdtempSync(path.join(tmpdir(), 'turnpike-initdb-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('is made and migrated before the serving thread opens it, and opened as it is the next time', async () => {
    const dataDir = path.join(root, 'db');
    expect(isNewDataDir(dataDir)).toBe(true);
    const first = await createDb({ dataDir });
    try {
      expect(isNewDataDir(dataDir)).toBe(false);
      // Every committed migration is recorded: the boot's own migrate() then finds nothing to do.
      const [applied] = rowsOf<{ n: number }>(
        await first.db.execute(sql`select count(*)::int as n from drizzle.__drizzle_migrations`),
      );
      expect(applied?.n).toBe(committedMigrations);
      await first.db.execute(sql`insert into options (key, value) values ('initdb.test', 'kept')`);
    } finally {
      await first.close();
    }
    expect(existsSync(`${dataDir}.lock`)).toBe(false);

    const second = await createDb({ dataDir });
    try {
      const [row] = rowsOf<{ value: string }>(
        await second.db.execute(sql`select value from options where key = 'initdb.test'`),
      );
      expect(row?.value).toBe('kept');
    } finally {
      await second.close();
    }
  });

  it("fails with the making process's error, its code kept (a folder under a file)", async () => {
    const file = path.join(root, 'a-file');
    writeFileSync(file, '');
    const failure = await makeDataDir({ dataDir: path.join(file, 'db'), extraStartParams: [] }).catch(
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(Error);
    expect((failure as { code?: string }).code).toBe('ENOTDIR');
  });
});
