import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { startTcpProxy } from '../testing/tcp-proxy.ts';

const CLI = join(import.meta.dirname, 'migrate-cli.ts');
const postgres = process.env.TEST_POSTGRES_URL;

/** Runs the migration command as the chart's Job does; its exit code and log lines. */
function migrateCli(
  env: Record<string, string>,
  onLog: (log: string) => void = () => {},
): Promise<{ code: number | null; log: string }> {
  const { DATABASE_URL: _url, NODE_OPTIONS: _options, ...inherited } = process.env;
  const child = spawn(process.execPath, [CLI], {
    env: { ...inherited, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stdout.on('data', (chunk: Buffer) => {
    log += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    log += chunk.toString();
    onLog(log);
  });
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, log })));
}

describe('node core/src/db/migrate-cli.ts (the chart migration Job)', () => {
  it('fails, saying why, when no DATABASE_URL is set', async () => {
    const { code, log } = await migrateCli({});
    expect(code).toBe(1);
    expect(JSON.parse(log.trim()).msg).toBe('migration failed');
    expect(log).toContain('DATABASE_URL is not set');
  });

  it.skipIf(!postgres)('migrates an empty database, then finds it current on a second run', async () => {
    const name = `turnpike_migrate_${randomBytes(6).toString('hex')}`;
    const admin = new pg.Client({ connectionString: postgres });
    await admin.connect();
    await admin.query(`create database ${name}`);
    const url = new URL(postgres as string);
    url.pathname = `/${name}`;
    try {
      const first = await migrateCli({ DATABASE_URL: url.toString() });
      expect(first.code).toBe(0);
      expect(JSON.parse(first.log.trim()).msg).toBe('database schema is current');
      const db = new pg.Client({ connectionString: url.toString() });
      await db.connect();
      const tables = await db.query(
        "select count(*)::int as n from information_schema.tables where table_schema = 'public'",
      );
      await db.end();
      expect(tables.rows[0].n).toBeGreaterThan(5);
      expect((await migrateCli({ DATABASE_URL: url.toString() })).code).toBe(0);
    } finally {
      await admin.query(`drop database if exists ${name} with (force)`);
      await admin.end();
    }
  });

  it.skipIf(!postgres)('waits for a database that is unreachable, then migrates it', async () => {
    const name = `turnpike_migrate_${randomBytes(6).toString('hex')}`;
    const admin = new pg.Client({ connectionString: postgres });
    await admin.connect();
    await admin.query(`create database ${name}`);
    const url = new URL(postgres as string);
    url.pathname = `/${name}`;
    const proxy = await startTcpProxy(url.toString());
    try {
      await proxy.refuse();
      let sawWaiting: () => void = () => {};
      const waiting = new Promise<void>((resolve) => {
        sawWaiting = resolve;
      });
      const run = migrateCli({ DATABASE_URL: proxy.urlThrough(url.toString()) }, (log) => {
        if (log.includes('waiting for it')) sawWaiting();
      });
      await waiting;
      await proxy.restore();
      const { code, log } = await run;
      expect(code).toBe(0);
      const lines = log
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line).msg);
      expect(lines).toEqual([
        'the database is unreachable: waiting for it',
        'the database answers',
        'database schema is current',
      ]);
    } finally {
      await proxy.close();
      await admin.query(`drop database if exists ${name} with (force)`);
      await admin.end();
    }
  });
});
