/**
 * The console API's test app as the server composes it: with the relay's channel probe, so the channel tests
 * call a channel as the relay would. Everything else is the API's own test kit (api/src/testing/test-app.ts).
 */
import {
  createTestApp as createApiTestApp,
  type TestApp,
  type TestAppOptions,
} from '@turnpike/api/testing/test-app';
import { createChannelProbe } from '@turnpike/relay/channel-probe';

export {
  ConsoleClient,
  createTestDatabaseUrl,
  ROOT,
  registerUser,
  saveOption,
  setupRoot,
  type TestApp,
} from '@turnpike/api/testing/test-app';

export function createTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  return createApiTestApp({ channelProbe: createChannelProbe, ...options });
}
