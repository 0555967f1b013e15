import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig, type ResolvedConfig } from '@turnpike/core/config';
import { logs } from '@turnpike/core/db/schema/index';
import { LogType } from '@turnpike/core/domain/logs';
import { createLogRepo, nowSeconds } from '@turnpike/core/repos/log.repo';
import { purgeOldLogs, startLogRetention } from '@turnpike/core/runtime/log-retention';
import { createRuntime, type Runtime } from '@turnpike/core/runtime/runtime';
import { asc } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  type ConsoleClient,
  createTestApp,
  createTestDatabaseUrl,
  setupRoot,
  type TestApp,
} from '../testing/test-app.ts';

const DAY = 24 * 3600;

describe('log retention', () => {
  let t: TestApp;
  let root: ConsoleClient;
  const now = nowSeconds();

  async function setRetention(days: number): Promise<void> {
    const response = await root.put('/api/option/', { key: 'LogRetentionDays', value: days });
    expect(response.json().success).toBe(true);
  }

  async function contents(): Promise<string[]> {
    const rows = await t.runtime.deps.db.select({ content: logs.content }).from(logs).orderBy(asc(logs.id));
    return rows.map((row) => row.content);
  }

  /** One row of each kind 40 days old and one consume row per age around a 30-day limit. */
  async function seed(): Promise<void> {
    const db = t.runtime.deps.db;
    await db.delete(logs);
    const repo = createLogRepo(db);
    const old = now - 40 * DAY;
    await repo.insert({ type: LogType.Consume, content: 'old consume', createdAt: old });
    await repo.insert({ type: LogType.Error, content: 'old error', createdAt: old });
    await repo.insert({ type: LogType.TopUp, content: 'old top-up', createdAt: old });
    await repo.insert({ type: LogType.Manage, content: 'old manage', createdAt: old });
    await repo.insert({ type: LogType.System, content: 'old system', createdAt: old });
    await repo.insert({ type: LogType.Consume, content: 'just over 30 days', createdAt: now - 30 * DAY - 5 });
    await repo.insert({
      type: LogType.Consume,
      content: 'just under 30 days',
      createdAt: now - 30 * DAY + 60,
    });
    await repo.insert({ type: LogType.Consume, content: 'today', createdAt: now - 60 });
  }

  beforeAll(async () => {
    t = await createTestApp();
    root = await setupRoot(t.app);
  });
  beforeEach(seed);
  afterAll(async () => {
    await t.close();
  });

  it('keeps every log while LogRetentionDays is 0, the default', async () => {
    expect(t.runtime.deps.options.get('LogRetentionDays')).toBe(0);
    expect(await purgeOldLogs(t.runtime.deps)).toBe(0);
    expect(await contents()).toHaveLength(8);
  });

  it('deletes only usage rows older than the limit and keeps the account history', async () => {
    await setRetention(30);
    expect(await purgeOldLogs(t.runtime.deps, new Date(now * 1000))).toBe(3);
    expect(await contents()).toEqual([
      'old top-up',
      'old manage',
      'old system',
      'just under 30 days',
      'today',
    ]);
    // Running again finds nothing more.
    expect(await purgeOldLogs(t.runtime.deps, new Date(now * 1000))).toBe(0);
  });

  it('purges at start and reports the count; stopping waits for the purge', async () => {
    await setRetention(7);
    const purged: number[] = [];
    const stop = startLogRetention(t.runtime.deps, { onPurged: (count) => purged.push(count) });
    await stop();
    expect(purged).toEqual([4]);
    expect(await contents()).toEqual(['old top-up', 'old manage', 'old system', 'today']);
  });

  it('runs again on its interval and stops running once stopped', async () => {
    await setRetention(30);
    const purged: number[] = [];
    const stop = startLogRetention(t.runtime.deps, {
      intervalMs: 50,
      onPurged: (count) => purged.push(count),
    });
    await expect.poll(() => purged.length).toBe(1);
    await createLogRepo(t.runtime.deps.db).insert({
      type: LogType.Consume,
      content: 'arrived late',
      createdAt: now - 90 * DAY,
    });
    await expect.poll(() => purged).toEqual([3, 1]);
    await stop();
    await createLogRepo(t.runtime.deps.db).insert({
      type: LogType.Consume,
      content: 'after stop',
      createdAt: now - 90 * DAY,
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await contents()).toContain('after stop');
  });

  it('reports a failed purge and keeps going', async () => {
    await setRetention(30);
    const errors: unknown[] = [];
    const broken = {
      ...t.runtime.deps,
      options: {
        ...t.runtime.deps.options,
        get: () => {
          throw new Error('option store down');
        },
      } as unknown as typeof t.runtime.deps.options,
    };
    const stop = startLogRetention(broken, { intervalMs: 50, onError: (error) => errors.push(error) });
    await expect.poll(() => errors.length).toBeGreaterThanOrEqual(2);
    await stop();
    expect(String(errors[0])).toContain('option store down');
  });
});

describe('log retention at boot', () => {
  it('purges old usage logs when a runtime starts on a database whose limit is set', async () => {
    // A database that outlives the first runtime: PGlite on disk, or a Postgres database of its own.
    const database = await createTestDatabaseUrl();
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'turnpike-retention-'));
    const config = loadConfig({
      DATA_DIR: dataDir,
      ...(database.url ? { DATABASE_URL: database.url } : {}),
      SESSION_SECRET: 'test-session-secret-0123456789',
      CRYPTO_SECRET: 'test-crypto-secret-0123456789',
      LOG_LEVEL: 'silent',
    }) as ResolvedConfig;
    const read = async (runtime: Runtime) =>
      (await runtime.deps.db.select({ content: logs.content }).from(logs).orderBy(asc(logs.id))).map(
        (row) => row.content,
      );
    try {
      const first = await createRuntime(config);
      await first.deps.options.set('LogRetentionDays', '10');
      const repo = createLogRepo(first.deps.db);
      await repo.insert({ type: LogType.Consume, content: 'stale', createdAt: nowSeconds() - 20 * DAY });
      await repo.insert({ type: LogType.Consume, content: 'fresh', createdAt: nowSeconds() - DAY });
      expect(await read(first)).toEqual(['stale', 'fresh']);
      await first.close();

      const second = await createRuntime(config);
      try {
        await expect.poll(() => read(second)).toEqual(['fresh']);
      } finally {
        await second.close();
      }
    } finally {
      await database.drop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
