import path from 'node:path';
import type { ResolvedConfig } from '@turnpike/core/config';
import { createDb } from '@turnpike/core/db/client';
import { migrate } from '@turnpike/core/db/migrate';
import { createEventBus } from '@turnpike/core/events/bus';
import { createMemoryKv, createRedisKv } from '@turnpike/core/kv/kv';
import { createOptionStore } from '@turnpike/core/options/store';
import { Redis } from 'ioredis';
import rootPackage from '../../package.json' with { type: 'json' };
import type { AppDeps } from './deps.ts';
import { startLogRetention } from './jobs/log-retention.ts';

export const VERSION: string = rootPackage.version;

/** The `onError` context of a pooled connection lost (a failover, a restart): a warning, the pool recovers. */
export const DATABASE_CONNECTION_LOST = 'database connection lost';

export interface Runtime {
  readonly deps: AppDeps;
  close(): Promise<void>;
}

/**
 * Opens the database (migrated), Redis, the event bus and the option cache that every role needs. Throws when
 * the database is unreachable, having closed what it opened, so the caller can wait and try again
 * (`waitForDatabase`). Redis being away does not stop it: every user of Redis rides an outage through.
 */
export async function createRuntime(
  config: ResolvedConfig,
  runtimeOptions: {
    inMemory?: boolean;
    /** Where background failures (option sync, ...) are reported; the server passes its logger. */
    onError?: (error: unknown, context: string) => void;
  } = {},
): Promise<Runtime> {
  const dataDir = runtimeOptions.inMemory ? undefined : path.join(config.dataDir, 'db');
  const database = await createDb({
    url: config.databaseUrl,
    dataDir,
    onConnectionError: (error) => runtimeOptions.onError?.(error, DATABASE_CONNECTION_LOST),
  });
  try {
    await migrate(database);
  } catch (error) {
    await database.close().catch(() => {});
    throw error;
  }
  const redis = config.redisUrl ? new Redis(config.redisUrl, { maxRetriesPerRequest: 2 }) : undefined;
  redis?.on('error', () => {});
  const bus = await createEventBus({ redisUrl: config.redisUrl, keyPrefix: config.redisKeyPrefix });
  const options = createOptionStore({
    db: database.db,
    bus,
    syncIntervalMs: config.syncFrequencySeconds * 1000,
    ...(runtimeOptions.onError
      ? { onError: (error: unknown) => runtimeOptions.onError?.(error, 'option sync') }
      : {}),
  });
  try {
    await options.load();
  } catch (error) {
    await bus.close();
    redis?.disconnect();
    await database.close().catch(() => {});
    throw error;
  }
  options.start();
  const deps: AppDeps = {
    config,
    db: database.db,
    dbKind: database.kind,
    bus,
    options,
    kv: redis ? createRedisKv(redis, config.redisKeyPrefix) : createMemoryKv(),
    redis,
    version: VERSION,
    startTime: Math.floor(Date.now() / 1000),
  };
  // Deletes usage logs older than LogRetentionDays (0 keeps them): on boot, then once a day.
  const stopLogRetention = startLogRetention(deps, {
    ...(runtimeOptions.onError
      ? { onError: (error: unknown) => runtimeOptions.onError?.(error, 'log retention') }
      : {}),
  });
  return {
    deps,
    async close() {
      await stopLogRetention();
      options.stop();
      await bus.close();
      redis?.disconnect();
      await database.close();
    },
  };
}
