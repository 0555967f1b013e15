import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Database } from '../db/client.ts';
import { createEventBus, type GatewayEvent } from '../events/bus.ts';
import { runImport } from './cli.ts';
import { createSqliteSource, NOW, type ReferenceSource } from './testing/reference-source.ts';
import { createTargetDatabase } from './testing/target.ts';

type Rows = Record<string, unknown>[];
const rowsOf = (result: unknown): Rows => (Array.isArray(result) ? result : (result as { rows: Rows }).rows);

/**
 * The command as an operator runs it: configuration from the environment (DATABASE_URL, or the embedded database
 * in DATA_DIR), the report on standard output, the exit code.
 */
describe('make import (the command)', () => {
  let source: ReferenceSource;
  let env: Record<string, string>;
  let drop: () => Promise<void> = async () => {};
  let dataDir: string;

  beforeAll(async () => {
    source = createSqliteSource('new-api', 'http://127.0.0.1:9');
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'turnpike-import-cli-'));
    env = {
      DATA_DIR: dataDir,
      CRYPTO_SECRET: 'cli-test-crypto-secret-0123',
      SESSION_SECRET: 'cli-test-session-0123456',
    };
    if (process.env.TEST_POSTGRES_URL) {
      const target = await createTargetDatabase();
      // The CLI opens its own connection; this one only creates and drops the database.
      await target.database.db.execute(sql`select 1`);
      env.DATABASE_URL = target.url!;
      drop = target.drop;
    }
  });
  afterAll(async () => {
    await drop();
  });

  async function run(argv: string[], extraEnv: Record<string, string> = {}) {
    let out = '';
    const code = await runImport(argv, { ...env, ...extraEnv }, { write: (text) => (out += text) });
    return { code, out };
  }

  /** Opens the target the way the CLI does, for one query. */
  async function query(text: string): Promise<Rows> {
    const database: Database = await createDb(
      env.DATABASE_URL ? { url: env.DATABASE_URL, maxConnections: 1 } : { dataDir: path.join(dataDir, 'db') },
    );
    try {
      return rowsOf(await database.db.execute(sql.raw(text)));
    } finally {
      await database.close();
    }
  }

  it('DRY_RUN=1 prints the counts and what stays behind, and writes nothing', async () => {
    const { code, out } = await run(['--from', `${source.url}?_busy_timeout=5000`], { DRY_RUN: '1' });
    expect(code).toBe(0);
    expect(out).toMatch(/dry run: nothing written/);
    expect(out).toMatch(/users\s+source 3, would write 3/);
    expect(out).toMatch(/options Turnpike does not know \(not carried\): SomeForkOnlyOption/);
    expect(out).toMatch(/table not carried: abilities: rebuilt from the channels/);
    expect(out).toMatch(/two_fas\s+source 2, would write 1/);
    expect(out).toMatch(/passkey_credentials\s+source 1, would write 1/);
    expect(out).toMatch(/column not carried: discord_id/);
    if (env.DATABASE_URL) expect((await query('select count(*)::int as n from users'))[0]?.n).toBe(0);
    else expect(readdirSync(dataDir)).toEqual([]);
  });

  it('imports, shows progress on long tables, and a second run writes nothing', async () => {
    const first = await run([`--from=${source.url}`, '--batch-size=2']);
    expect(first.code).toBe(0);
    expect(first.out).toMatch(/logs: 2\/3/);
    expect(first.out).toMatch(/users\s+source 3, written 3, already present 0/);
    expect((await query('select count(*)::int as n from logs'))[0]?.n).toBe(3);
    const second = await run(['--from', source.url]);
    expect(second.code).toBe(0);
    expect(second.out).not.toMatch(/written [1-9]/);
  });

  it('goes on after the last log written when a run was cut short', async () => {
    await query('delete from logs where id = 3');
    const { code, out } = await run(['--from', source.url]);
    expect(code).toBe(0);
    expect(out).toMatch(/logs: resuming after id 2/);
    expect(out).toMatch(/logs\s+source 3, written 1, already present 2/);
  });

  it('--skip-logs and --logs-since leave history behind', async () => {
    const skipped = await run(['--from', source.url, '--skip-logs', '--dry-run']);
    expect(skipped.out).toMatch(/logs\s+not read: skipped \(--skip-logs\)/);
    const since = new Date((NOW - 4000) * 1000).toISOString();
    const recent = await run(['--from', source.url, `--logs-since=${since}`, '--dry-run']);
    expect(recent.out).toMatch(/logs\s+source 1,/);
  });

  it('says what is wrong with the arguments and exits 1', async () => {
    expect((await run([])).out).toMatch(/say where to import from/);
    const bad = await run(['--from', 'oracle://db']);
    expect(bad.code).toBe(1);
    expect(bad.out).toMatch(/the source must be a sqlite/);
  });

  it('exits 2 and writes nothing when Turnpike holds users of its own', async () => {
    await query(`insert into users (id, username, password) values (90, 'local-user', 'x')`);
    const count = async () => (await query('select count(*)::int as n from users'))[0]?.n;
    const before = await count();
    const { code, out } = await run(['--from', source.url]);
    expect(code).toBe(2);
    expect(await count()).toBe(before);
    expect(out).toMatch(/pass --merge/);
    expect((await run(['--from', source.url, '--merge'])).code).toBe(0);
  });
});

/** What an operator checks after `make import FROM=… DRY_RUN=1`: the report, and that nothing was made or changed. */
describe('a dry run writes nothing', () => {
  const env = { CRYPTO_SECRET: 'cli-test-crypto-secret-0123', SESSION_SECRET: 'cli-test-session-0123456' };

  async function dryRun(extraEnv: Record<string, string>) {
    const source = createSqliteSource('new-api', 'http://127.0.0.1:9');
    let out = '';
    const code = await runImport(
      ['--from', source.url, '--dry-run'],
      { ...extraEnv },
      {
        write: (text) => (out += text),
      },
    );
    return { code, out };
  }

  it('into an empty DATA_DIR: no folder, no database, no secrets file, and the counts', async () => {
    const dataDir = path.join(mkdtempSync(path.join(os.tmpdir(), 'turnpike-import-dry-')), 'data');
    // No secrets in the environment: a real import would generate and keep them in DATA_DIR.
    const { code, out } = await dryRun({ DATA_DIR: dataDir });
    expect(code, out).toBe(0);
    expect(out).toMatch(/users\s+source 3, would write 3/);
    expect(out).toMatch(/logs\s+source 3, would write 3/);
    expect(existsSync(dataDir) ? readdirSync(dataDir, { recursive: true }) : []).toEqual([]);
  });

  it.skipIf(!process.env.TEST_POSTGRES_URL)(
    'into a fresh Postgres database (DATABASE_URL): no table made, no migration applied',
    async () => {
      const base = process.env.TEST_POSTGRES_URL!;
      const name = `turnpike_dry_${Date.now().toString(36)}`;
      const admin = new pg.Client({ connectionString: base });
      await admin.connect();
      await admin.query(`create database ${name}`);
      const url = new URL(base);
      url.pathname = `/${name}`;
      try {
        const { code, out } = await dryRun({
          ...env,
          DATA_DIR: '/nonexistent/turnpike',
          DATABASE_URL: url.toString(),
        });
        expect(code, out).toBe(0);
        expect(out).toMatch(/users\s+source 3, would write 3/);
        const target = new pg.Client({ connectionString: url.toString() });
        await target.connect();
        try {
          const tables = await target.query(
            `select table_schema, table_name from information_schema.tables where table_schema not in ('pg_catalog', 'information_schema')`,
          );
          expect(tables.rows).toEqual([]);
        } finally {
          await target.end();
        }
      } finally {
        await admin.query(`drop database if exists ${name} with (force)`);
        await admin.end();
      }
    },
  );
});

describe.skipIf(!process.env.TEST_REDIS_URL)('make import beside running servers (Redis)', () => {
  it('tells them to read the new channels, options, tokens and the replaced root again', async () => {
    const source = createSqliteSource('new-api', 'http://127.0.0.1:9');
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'turnpike-import-bus-'));
    const keyPrefix = `turnpike-test:import-${Date.now()}:`;
    const target = process.env.TEST_POSTGRES_URL ? await createTargetDatabase() : undefined;
    const bus = await createEventBus({ redisUrl: process.env.TEST_REDIS_URL, keyPrefix });
    const seen: GatewayEvent[] = [];
    bus.subscribe((event) => {
      seen.push(event);
    });
    try {
      let out = '';
      const code = await runImport(
        ['--from', source.url],
        {
          DATA_DIR: dataDir,
          CRYPTO_SECRET: 'cli-test-crypto-secret-0123',
          SESSION_SECRET: 'cli-test-session-0123456',
          REDIS_URL: process.env.TEST_REDIS_URL,
          REDIS_KEY_PREFIX: keyPrefix,
          ...(target ? { DATABASE_URL: target.url! } : {}),
        },
        { write: (text) => (out += text) },
      );
      expect(code, out).toBe(0);
      await waitUntil(() => seen.length >= 3);
      expect(seen).toContainEqual({ type: 'channels.changed', ids: [1, 5] });
      expect(seen).toContainEqual({ type: 'tokens.changed', ids: [1, 2] });
      const options = seen.find((e) => e.type === 'options.changed');
      expect(options && 'keys' in options ? options.keys : []).toContain('GroupRatio');
    } finally {
      await bus.close();
      await target?.drop();
    }
  });
});

async function waitUntil(check: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
