/**
 * ROLE=all in a test: the relay's test app (relay/src/testing/relay-test-app.ts: core's test runtime, seeding
 * through the core repos) with the console API built on the same runtime, as the server composes them, channel
 * probe included. For the tests that drive /api/... beside the relay's routes.
 */
import { buildApp } from '@turnpike/api';
import type { TestRuntimeOptions } from '@turnpike/core/testing/test-runtime';
import { createChannelProbe } from '@turnpike/relay/channel-probe';
import {
  createRelayTestApp as createRelayOnlyTestApp,
  type RelayTestApp as RelayOnlyTestApp,
} from '@turnpike/relay/testing/relay-test-app';
import type { FastifyInstance } from 'fastify';

export { injectThroughServer, seedFakeModels } from '@turnpike/relay/testing/relay-test-app';

export interface RelayTestApp extends RelayOnlyTestApp {
  /** The console API on the relay's runtime. */
  readonly app: FastifyInstance;
}

export async function createRelayTestApp(options: TestRuntimeOptions = {}): Promise<RelayTestApp> {
  const base = await createRelayOnlyTestApp(options);
  const probe = createChannelProbe(base.runtime.deps);
  const app = await buildApp({ ...base.runtime.deps, channelProbe: probe });
  await app.ready();
  return {
    app,
    runtime: base.runtime,
    config: base.config,
    get relay() {
      return base.relay;
    },
    startRelay: base.startRelay,
    seedUser: base.seedUser,
    seedToken: base.seedToken,
    seedChannel: base.seedChannel,
    async close() {
      await app.close();
      await probe.close();
      await base.close();
    },
  };
}
