/**
 * A relay on a fresh database for one test file: core's test runtime (PGlite, or Postgres + Redis when
 * TEST_POSTGRES_URL / TEST_REDIS_URL are set) with only the relay built on it, as ROLE=relay runs. Users, tokens
 * and channels are seeded through the core repos, as the console API writes them. A test that drives the console
 * API beside the relay (ROLE=all) lives in server/ (server/src/testing/all-test-app.ts).
 */
import { createChannelKeyBox } from '@turnpike/core/channels/channel-key';
import type { Channel, Token, User } from '@turnpike/core/db/schema/index';
import { generateTokenKey } from '@turnpike/core/domain/tokens';
import { createAbilityRepo } from '@turnpike/core/repos/ability.repo';
import { createChannelRepo } from '@turnpike/core/repos/channel.repo';
import { createTokenRepo } from '@turnpike/core/repos/token.repo';
import { createUserRepo } from '@turnpike/core/repos/user.repo';
import {
  createTestRuntime,
  type TestRuntime,
  type TestRuntimeOptions,
} from '@turnpike/core/testing/test-runtime';
import type { FastifyInstance } from 'fastify';
import { type InjectOptions, inject } from 'light-my-request';
import { buildRelayApp, type RelayOptions } from '../app.ts';

export interface RelayTestApp extends TestRuntime {
  readonly relay: FastifyInstance;
  /** Builds the relay (after channels and options are seeded: it loads channels at boot). */
  startRelay(options?: Omit<RelayOptions, 'flushIntervalMs'>): Promise<FastifyInstance>;
  seedUser(
    fields?: Partial<Pick<User, 'quota' | 'role' | 'group' | 'status' | 'setting' | 'quotaWindows'>>,
  ): Promise<User>;
  seedToken(
    userId: number,
    fields?: Partial<
      Pick<
        Token,
        | 'remainQuota'
        | 'unlimitedQuota'
        | 'status'
        | 'modelLimitsEnabled'
        | 'modelLimits'
        | 'allowIps'
        | 'group'
        | 'expiredTime'
        | 'quotaWindows'
      >
    >,
  ): Promise<Token>;
  seedChannel(fields: {
    key: string;
    baseUrl: string;
    models: string;
    group?: string;
    priority?: number;
    weight?: number;
    modelMapping?: Record<string, string>;
    statusCodeMapping?: Record<string, string>;
    autoBan?: number;
    /** Channel type (catalogue value); default 1, OpenAI. */
    type?: number;
    name?: string;
    /** The channel's `setting` JSON (`proxy`, `force_format`, `thinking_to_content`, `headers`). */
    setting?: Record<string, unknown>;
    /** The type's extra field (Azure's API version, Vertex's region). */
    other?: string;
  }): Promise<Channel>;
}

let userSequence = 0;

/** Prices for the fake upstream's chat and embedding models, and one channel serving both (key `sk-upstream`). */
export async function seedFakeModels(t: RelayTestApp, upstreamUrl: string): Promise<void> {
  await t.runtime.deps.options.set(
    'ModelRatio',
    JSON.stringify({ 'gpt-4o-mini': 1.5, 'text-embedding-3-small': 0.01 }),
  );
  await t.seedChannel({
    key: 'sk-upstream',
    baseUrl: upstreamUrl,
    models: 'gpt-4o-mini,text-embedding-3-small',
  });
}

/**
 * Makes `app.inject` hand its requests to the HTTP server's `request` listener, where a real connection's requests
 * go: to the front door first (front-door.ts), then to Fastify. Fastify's own `inject` calls its router directly
 * and would never meet the door, so the relay tests would not test what serves production traffic.
 */
export function injectThroughServer(app: FastifyInstance): FastifyInstance {
  const dispatch = (req: unknown, res: unknown) => app.server.emit('request', req, res);
  app.inject = ((options: InjectOptions | string) => inject(dispatch, options)) as FastifyInstance['inject'];
  return app;
}

export async function createRelayTestApp(options: TestRuntimeOptions = {}): Promise<RelayTestApp> {
  const base = await createTestRuntime(options);
  const { db, config } = base.runtime.deps;
  const box = createChannelKeyBox(config.cryptoSecret);
  let relay: FastifyInstance | undefined;
  return {
    ...base,
    get relay() {
      if (!relay) throw new Error('call startRelay() first');
      return relay;
    },
    async startRelay(options = {}) {
      relay = injectThroughServer(
        await buildRelayApp(base.runtime.deps, { ...options, flushIntervalMs: 20 }),
      );
      await relay.ready();
      return relay;
    },
    seedUser(fields = {}) {
      userSequence += 1;
      return createUserRepo(db).insert({
        username: `relay-user-${userSequence}-${Math.random().toString(36).slice(2, 8)}`,
        password: 'not-a-real-hash',
        quota: 1_000_000,
        ...fields,
      });
    },
    seedToken(userId, fields = {}) {
      return createTokenRepo(db).insert({
        userId,
        key: generateTokenKey(),
        name: 'relay-test',
        remainQuota: 0,
        unlimitedQuota: true,
        ...fields,
      });
    },
    async seedChannel(fields) {
      const [channel] = await createChannelRepo(db).insertMany([
        {
          type: fields.type ?? 1,
          name: fields.name ?? 'test channel',
          key: box.seal(fields.key),
          baseUrl: fields.baseUrl,
          models: fields.models,
          group: fields.group ?? 'default',
          priority: fields.priority ?? 0,
          weight: fields.weight ?? 0,
          autoBan: fields.autoBan ?? 1,
          modelMapping: fields.modelMapping ? JSON.stringify(fields.modelMapping) : null,
          statusCodeMapping: fields.statusCodeMapping ? JSON.stringify(fields.statusCodeMapping) : null,
          setting: fields.setting ? JSON.stringify(fields.setting) : null,
          other: fields.other ?? '',
        },
      ]);
      await createAbilityRepo(db).rebuild([channel!]);
      return channel!;
    },
    async close() {
      await relay?.close();
      await base.close();
    },
  };
}
