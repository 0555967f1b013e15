import path from 'node:path';
import type { Redis } from 'ioredis';
import rootPackage from '../../../package.json' with { type: 'json' };
import type { ResolvedConfig } from '../config.ts';
import { deferEventsInTransaction, followAmbientTransaction } from '../db/ambient.ts';
import { createDb, type DatabaseKind, type Db } from '../db/client.ts';
import { migrate } from '../db/migrate.ts';
import { createEventBus, type EventBus } from '../events/bus.ts';
import { createMemoryKv, createRedisKv, type KvStore } from '../kv/kv.ts';
import { createRedisClient, reconnectSoon } from '../kv/redis-client.ts';
import { createOptionStore, type OptionStore } from '../options/store.ts';
import { startLogRetention } from './log-retention.ts';

export const VERSION: string = rootPackage.version;

/** The `onError` context of a pooled connection lost (a failover, a restart): a warning, the pool recovers. */
export const DATABASE_CONNECTION_LOST = 'database connection lost';

/**
 * What every role gets from the runtime, built once by the server (or a test) and passed in: the console API's
 * `AppDeps` and the relay's `RelayDeps` are this, with what only that role needs beside it.
 */
export interface RuntimeDeps {
  readonly config: ResolvedConfig;
  readonly db: Db;
  readonly dbKind: DatabaseKind;
  readonly bus: EventBus;
  readonly options: OptionStore;
  readonly kv: KvStore;
  /** Present when REDIS_URL is set: shared rate-limit counters, presence, state every process shares. */
  readonly redis?: Redis | undefined;
  readonly version: string;
  /** Unix seconds when this process started. */
  readonly startTime: number;
}

export interface Runtime {
  readonly deps: RuntimeDeps;
  close(): Promise<void>;
}

/**
 * Opens the database (migrated), Redis, the event bus and the option cache that every role needs, and starts the
 * log retention job (every role runs it: a purge is safe on every replica at once). Throws when
 * the database is unreachable, having closed what it opened, so the caller can wait and try again
 * (`waitForDatabase`). Redis being away does not stop it: every user of Redis rides an outage through.
 */
export async function createRuntime(
  config: ResolvedConfig,
  runtimeOptions: {
    inMemory?: boolean;
    /** In memory: start from this dumped, migrated data folder (tests: core/src/testing/pglite-template.ts). */
    pgliteTemplate?: string;
    /** Where background failures (option sync, ...) are reported; the server passes its logger. */
    onError?: (error: unknown, context: string) => void;
  } = {},
): Promise<Runtime> {
  const dataDir = runtimeOptions.inMemory ? undefined : path.join(config.dataDir, 'db');
  const database = await createDb({
    url: config.databaseUrl,
    dataDir,
    template: runtimeOptions.pgliteTemplate,
    onConnectionError: (error) => runtimeOptions.onError?.(error, DATABASE_CONNECTION_LOST),
  });
  try {
    await migrate(database);
  } catch (error) {
    await database.close().catch(() => {});
    throw error;
  }
  const redis = config.redisUrl
    ? createRedisClient(config.redisUrl, {
        maxRetriesPerRequest: 2,
        retryStrategy: reconnectSoon,
        // limits and affinity: the commands of the calls served in one tick go out in one write
        enableAutoPipelining: true,
      })
    : undefined;
  redis?.on('error', () => {});
  // Administrative changes run with their audit row in one transaction (docs/adr/0045): every role holds the
  // database and bus that follow it.
  const db = followAmbientTransaction(database.db);
  const bus = deferEventsInTransaction(
    await createEventBus({ redisUrl: config.redisUrl, keyPrefix: config.redisKeyPrefix }),
  );
  const options = createOptionStore({
    db,
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
  const deps: RuntimeDeps = {
    config,
    db,
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
