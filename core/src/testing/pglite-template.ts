/**
 * One migrated embedded database that test runtimes start from. Opening PGlite in memory runs Postgres's `initdb`
 * in WebAssembly and then every migration: ~4 s a test file on a quiet host, over 10 s on a busy one. The database
 * is made once per machine and migration set, dumped to a gzip tarball in the temporary folder, and each test
 * runtime loads the tarball (~0.7 s) instead; migrating it again at boot finds nothing to apply.
 */
import { createHash } from 'node:crypto';
import {
  closeSync,
  existsSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { drizzle } from 'drizzle-orm/pglite';
import { migrate, migrationsFolder } from '../db/migrate.ts';
import { pgliteOptionsOf } from '../db/pglite-options.ts';
import * as schema from '../db/schema/index.ts';

/** A builder that has held the lock this long is taken to have died; another one builds. */
const STALE_LOCK_MS = 120_000;

/** What a migrated database was made from: every migration file (and what else is named), as 16 hex digits. */
export function migrationSetHash(...also: readonly Uint8Array[]): string {
  const hash = createHash('sha256');
  for (const part of also) hash.update(part);
  for (const file of readdirSync(migrationsFolder, { recursive: true }).map(String).sort()) {
    const full = path.join(migrationsFolder, file);
    if (statSync(full).isFile()) hash.update(file).update(readFileSync(full));
  }
  return hash.digest('hex').slice(0, 16);
}

/** The name of the tarball: what it was made from (PGlite's version and every migration file). */
function templatePath(): string {
  const entry = fileURLToPath(import.meta.resolve('@electric-sql/pglite'));
  const version = readFileSync(path.join(path.dirname(entry), '..', 'package.json'));
  return path.join(tmpdir(), `turnpike-pglite-${migrationSetHash(version)}.tgz`);
}

async function build(file: string): Promise<void> {
  const client = new PGlite(pgliteOptionsOf({ extraStartParams: [] }));
  try {
    await client.waitReady;
    await migrate({ db: drizzle({ client, schema }), kind: 'pglite', close: async () => {} } as never);
    const dump = await client.dumpDataDir('gzip');
    const partial = `${file}.${process.pid}.partial`;
    writeFileSync(partial, new Uint8Array(await dump.arrayBuffer()));
    renameSync(partial, file);
  } finally {
    await client.close();
  }
}

let made: Promise<string> | undefined;

/** The path of the migrated tarball, made by the first test process that needs it (the others wait for it). */
export function migratedPgliteTemplate(): Promise<string> {
  made ??= (async () => {
    const file = templatePath();
    const lock = `${file}.lock`;
    for (;;) {
      if (existsSync(file)) return file;
      let held: number | undefined;
      try {
        held = openSync(lock, 'wx');
      } catch {
        // Another process builds it: wait, unless its lock is stale.
        const age = Date.now() - (statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
        if (age > STALE_LOCK_MS) rmSync(lock, { force: true });
        await new Promise((resolve) => setTimeout(resolve, 200));
        continue;
      }
      try {
        if (!existsSync(file)) await build(file);
        return file;
      } finally {
        closeSync(held);
        rmSync(lock, { force: true });
      }
    }
  })();
  return made;
}
