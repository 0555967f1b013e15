/**
 * One test file's world: the stand-in API server, a fresh database (PGlite in memory, or a database of its own on
 * TEST_POSTGRES_URL, core's `createTestDatabaseUrl`), Redis under a key prefix of its own when TEST_REDIS_URL is
 * set, operator instances and, when the caller hands over the relay's `buildRelayApp` (the server's tests:
 * server/src/testing/operator-harness.ts), relay processes on the same database and key prefix.
 *
 * Each relay keeps its presence key (`<prefix>presence:relay:<id>`) with core's `startPresence`, as the server
 * does for ROLE=relay, so the operator's `status.relays` counts them.
 */
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { createChannelKeyBox } from '@turnpike/core/channels/channel-key';
import { startPresence } from '@turnpike/core/cluster/presence';
import { loadConfig, type ResolvedConfig } from '@turnpike/core/config';
import { createDb, type Database } from '@turnpike/core/db/client';
import { migrate } from '@turnpike/core/db/migrate';
import { generateTokenKey } from '@turnpike/core/domain/tokens';
import { createMemoryBus, createRedisBus, type EventBus } from '@turnpike/core/events/bus';
import { createOptionStore, type OptionStore } from '@turnpike/core/options/store';
import { createTokenRepo } from '@turnpike/core/repos/token.repo';
import { createUserRepo } from '@turnpike/core/repos/user.repo';
import { createTestDatabaseUrl } from '@turnpike/core/testing/test-runtime';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { createKubeClient, kubeConfigFor } from '../kube/client.ts';
import { createOperator, type Operator, type OperatorOptions } from '../operator.ts';
import { type FakeApiServer, startFakeApiServer } from './fake-api-server.ts';

export interface RelayProcess {
  readonly id: string;
  readonly app: FastifyInstance;
  readonly bus: EventBus;
  readonly options: OptionStore;
  close(): Promise<void>;
}

export interface Harness {
  readonly api: FakeApiServer;
  readonly database: Database;
  /** The test database's Postgres URL (undefined on PGlite). */
  readonly databaseUrl: string | undefined;
  readonly config: ResolvedConfig;
  readonly redis: Redis | undefined;
  readonly prefix: string;
  readonly box: ReturnType<typeof createChannelKeyBox>;
  /** A signed token header for relay calls (unlimited quota). */
  readonly auth: { authorization: string };
  /** `databaseUrl`: the operator's own way to the database (a proxy the test cuts), instead of the test's. */
  startOperator(
    options?: Partial<OperatorOptions> & { identity?: string; databaseUrl?: string },
  ): Promise<Operator>;
  /** A relay process of its own; only with the relay handed to `createHarness`. */
  startRelay(): Promise<RelayProcess>;
  /** Sets an option as the console would, from a process of its own. */
  setOption(key: string, value: string): Promise<void>;
  close(): Promise<void>;
}

/** The relay's `buildRelayApp`, which the operator's own tests never import (layers: operator -> core only). */
export type RelayBuilder = (
  deps: Pick<ResolvedDeps, 'config' | 'db' | 'bus' | 'options' | 'redis'>,
  options: { flushIntervalMs: number },
) => Promise<FastifyInstance>;

interface ResolvedDeps {
  readonly config: ResolvedConfig;
  readonly db: Database['db'];
  readonly bus: EventBus;
  readonly options: OptionStore;
  readonly redis: Redis | undefined;
}

const SILENT = pino({ level: process.env.OPERATOR_TEST_LOG ?? 'silent' });

export async function createHarness(setup: { buildRelay?: RelayBuilder } = {}): Promise<Harness> {
  const api = await startFakeApiServer();
  const owned = await createTestDatabaseUrl();
  const redisUrl = process.env.TEST_REDIS_URL;
  const prefix = `turnpike-test:${randomBytes(4).toString('hex')}:`;
  const config = loadConfig({
    DATA_DIR: path.join(os.tmpdir(), `turnpike-operator-test-${randomBytes(4).toString('hex')}`),
    ...(owned.url ? { DATABASE_URL: owned.url } : {}),
    ...(redisUrl ? { REDIS_URL: redisUrl } : {}),
    REDIS_KEY_PREFIX: prefix,
    SESSION_SECRET: 'test-session-secret-0123456789',
    CRYPTO_SECRET: 'test-crypto-secret-0123456789',
    LOG_LEVEL: 'silent',
  }) as ResolvedConfig;
  const database = await createDb({ url: owned.url });
  await migrate(database);
  const memoryBus = redisUrl ? undefined : createMemoryBus();
  const newBus = async () => (redisUrl ? createRedisBus(redisUrl, prefix) : (memoryBus as EventBus));
  /** A process of its own gets its own pool on Postgres; PGlite is one connection shared in this process. */
  const newDb = async () => (owned.url ? createDb({ url: owned.url, maxConnections: 4 }) : undefined);
  const redis = redisUrl ? new Redis(redisUrl) : undefined;
  const closers: (() => Promise<void>)[] = [];

  const user = await createUserRepo(database.db).insert({
    username: `operator-test-${randomBytes(3).toString('hex')}`,
    password: 'not-a-real-hash',
    quota: 1_000_000_000,
  });
  const token = await createTokenRepo(database.db).insert({
    userId: user.id,
    key: generateTokenKey(),
    name: 'operator-test',
    remainQuota: 0,
    unlimitedQuota: true,
  });

  let operatorCount = 0;
  let relayCount = 0;
  const harness: Harness = {
    api,
    database,
    databaseUrl: owned.url,
    config,
    redis,
    prefix,
    box: createChannelKeyBox(config.cryptoSecret),
    auth: { authorization: `Bearer sk-${token.key}` },

    async startOperator({ databaseUrl, ...options } = {}) {
      operatorCount += 1;
      const own = databaseUrl ? await createDb({ url: databaseUrl, maxConnections: 4 }) : await newDb();
      const bus = await newBus();
      const operator = createOperator(
        {
          db: (own ?? database).db,
          bus,
          redis,
          redisKeyPrefix: prefix,
          cryptoSecret: config.cryptoSecret,
          kube: createKubeClient(kubeConfigFor(api.url)),
          logger: SILENT,
        },
        {
          identity: `operator-${operatorCount}`,
          leaseNamespace: 'turnpike-system',
          leaseName: 'turnpike-operator',
          leaseDurationMs: 2_000,
          renewDeadlineMs: 1_500,
          retryPeriodMs: 200,
          informerBackoffMs: { min: 50, max: 1_000 },
          ...options,
        },
      );
      await operator.start();
      let closed = false;
      closers.push(async () => {
        if (closed) return;
        closed = true;
        await operator.stop();
        if (bus !== memoryBus) await bus.close();
        await own?.close();
      });
      return operator;
    },

    async startRelay() {
      const { buildRelay } = setup;
      if (!buildRelay) throw new Error("startRelay needs the relay: use the server tests' harness");
      relayCount += 1;
      const id = `relay-${relayCount}-${randomBytes(3).toString('hex')}`;
      const own = await newDb();
      const db = (own ?? database).db;
      const bus = await newBus();
      const options = createOptionStore({ db, bus, syncIntervalMs: 60_000 });
      await options.load();
      options.start();
      const app = await buildRelay({ config, db, bus, options, redis }, { flushIntervalMs: 20 });
      await app.ready();
      const presence = redis
        ? startPresence({ redis, keyPrefix: prefix, role: 'relay', bus, processId: id })
        : undefined;
      let closed = false;
      const close = async () => {
        if (closed) return;
        closed = true;
        await presence?.stop();
        options.stop();
        await app.close();
        if (bus !== memoryBus) await bus.close();
        await own?.close();
      };
      closers.push(close);
      return { id, app, bus, options, close };
    },

    async setOption(key, value) {
      const bus = await newBus();
      const store = createOptionStore({ db: database.db, bus });
      await store.load();
      await store.set(key, value);
      if (bus !== memoryBus) await bus.close();
    },

    async close() {
      for (const close of closers.reverse()) await close().catch(() => {});
      await memoryBus?.close();
      if (redis) {
        const keys = await redis.keys(`${prefix}*`);
        if (keys.length > 0) await redis.del(...keys);
        redis.disconnect();
      }
      await database.close();
      await owned.drop();
      await api.close();
    },
  };
  return harness;
}
