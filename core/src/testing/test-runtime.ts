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
import { createRuntime, type Runtime } from '../runtime/runtime.ts';

/** A database of its own on TEST_POSTGRES_URL, dropped by `drop`; `url` is undefined without it (PGlite). */
export async function createTestDatabaseUrl(): Promise<{ url: string | undefined; drop(): Promise<void> }> {
  const base = process.env.TEST_POSTGRES_URL;
  if (!base) return { url: undefined, drop: async () => {} };
  const name = `turnpike_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(base);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: base });
      await client.connect();
      await client.query(`drop database if exists ${name} with (force)`);
      await client.end();
    },
  };
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
    // Without a Postgres URL the runtime would open PGlite on disk; tests want it in memory.
    const runtime = await createRuntime(config, { inMemory: !databaseUrl });
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
