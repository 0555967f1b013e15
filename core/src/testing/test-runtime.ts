/**
 * Core's runtime for one test file, for every role's tests: a fresh database (in-memory PGlite by default, or a
 * database of its own on the Postgres of TEST_POSTGRES_URL, so files run in parallel), Redis when TEST_REDIS_URL
 * is set under a key prefix of the file's own unless `redisKeyPrefix` is shared on purpose. The console API's
 * test app, the relay's and the operator's harnesses build on it.
 */
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { loadConfig, type ResolvedConfig } from '../config.ts';
import { createDb } from '../db/client.ts';
import { migrate } from '../db/migrate.ts';
import { createRuntime, type Runtime } from '../runtime/runtime.ts';
import { migratedPgliteTemplate, migrationSetHash } from './pglite-template.ts';

/**
 * A database of its own on TEST_POSTGRES_URL, copied from the migrated template (`migratedPostgresTemplate`), dropped
 * by `drop`; `url` is undefined without it (PGlite).
 */
export async function createTestDatabaseUrl(): Promise<{ url: string | undefined; drop(): Promise<void> }> {
  const base = process.env.TEST_POSTGRES_URL;
  if (!base) return { url: undefined, drop: async () => {} };
  const template = await migratedPostgresTemplate(base);
  const name = `turnpike_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`create database ${name} template ${template}`);
  await admin.end();
  return {
    url: databaseUrlOf(base, name),
    async drop() {
      const client = new pg.Client({ connectionString: base });
      await client.connect();
      await client.query(`drop database if exists ${name} with (force)`);
      await client.end();
    },
  };
}

const databaseUrlOf = (base: string, name: string) => {
  const url = new URL(base);
  url.pathname = `/${name}`;
  return url.toString();
};

/** Serializes the processes that look for (and make) the template on one Postgres. */
const TEMPLATE_LOCK = 738215002;
let postgresTemplate: Promise<string> | undefined;

/**
 * A database migrated once per migration set on the test Postgres, that each test file's database is copied from
 * (`create database … template …`, a file copy) instead of running every migration again. Nobody connects to it
 * after it is made: Postgres refuses to copy a template that has a session open.
 */
function migratedPostgresTemplate(base: string): Promise<string> {
  postgresTemplate ??= (async () => {
    const name = `turnpike_template_${migrationSetHash()}`;
    const admin = new pg.Client({ connectionString: base });
    await admin.connect();
    try {
      await admin.query('select pg_advisory_lock($1)', [TEMPLATE_LOCK]);
      const { rowCount } = await admin.query('select 1 from pg_database where datname = $1', [name]);
      if (rowCount === 0) {
        const building = `${name}_building`;
        await admin.query(`drop database if exists ${building} with (force)`);
        await admin.query(`create database ${building}`);
        const database = await createDb({ url: databaseUrlOf(base, building), maxConnections: 1 });
        try {
          await migrate(database);
        } finally {
          await database.close();
        }
        // The migration's sessions may still be ending on the server side: renaming waits for them.
        for (let attempt = 0; ; attempt += 1) {
          try {
            await admin.query(`alter database ${building} rename to ${name}`);
            break;
          } catch (error) {
            if (attempt >= 50) throw error;
            await new Promise((resolve) => setTimeout(resolve, 100));
          }
        }
      }
      return name;
    } finally {
      await admin.query('select pg_advisory_unlock($1)', [TEMPLATE_LOCK]).catch(() => {});
      await admin.end();
    }
  })();
  postgresTemplate.catch(() => {
    postgresTemplate = undefined;
  });
  return postgresTemplate;
}

export interface TestRuntimeOptions {
  /** Share one database between runtimes (multi-instance tests). */
  databaseUrl?: string;
  env?: Record<string, string>;
  redisKeyPrefix?: string;
}

export interface TestRuntime {
  readonly runtime: Runtime;
  readonly config: ResolvedConfig;
  /** Closes the runtime and drops the database it created. */
  close(): Promise<void>;
}

/** The configuration of a test process: test secrets, silent logs, the test database and Redis. */
export function testConfig(
  options: TestRuntimeOptions & { databaseUrl?: string | undefined } = {},
): ResolvedConfig {
  const redisUrl = process.env.TEST_REDIS_URL;
  return loadConfig({
    DATA_DIR: path.join(os.tmpdir(), `turnpike-test-${randomBytes(4).toString('hex')}`),
    ...(options.databaseUrl ? { DATABASE_URL: options.databaseUrl } : {}),
    ...(redisUrl ? { REDIS_URL: redisUrl } : {}),
    REDIS_KEY_PREFIX: options.redisKeyPrefix ?? `turnpike-test:${randomBytes(4).toString('hex')}:`,
    SESSION_SECRET: 'test-session-secret-0123456789',
    CRYPTO_SECRET: 'test-crypto-secret-0123456789',
    LOG_LEVEL: 'silent',
    ...options.env,
  }) as ResolvedConfig;
}

export async function createTestRuntime(options: TestRuntimeOptions = {}): Promise<TestRuntime> {
  const owned = options.databaseUrl === undefined ? await createTestDatabaseUrl() : undefined;
  const databaseUrl = options.databaseUrl ?? owned?.url;
  const config = testConfig({ ...options, databaseUrl });
  try {
    // Without a Postgres URL the runtime would open PGlite on disk; tests want it in memory, from the migrated copy.
    const runtime = await createRuntime(
      config,
      databaseUrl ? {} : { inMemory: true, pgliteTemplate: await migratedPgliteTemplate() },
    );
    return {
      runtime,
      config,
      async close() {
        await runtime.close();
        await owned?.drop();
      },
    };
  } catch (error) {
    await owned?.drop();
    throw error;
  }
}
