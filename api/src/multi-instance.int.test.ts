import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ConsoleClient,
  createTestApp,
  createTestDatabaseUrl,
  ROOT,
  type TestApp,
} from './testing/test-app.ts';

/** Two replicas on one Postgres and one Redis, as on Kubernetes. Needs TEST_POSTGRES_URL and TEST_REDIS_URL. */
const shared = Boolean(process.env.TEST_POSTGRES_URL && process.env.TEST_REDIS_URL);

describe.skipIf(!shared)('two API replicas on one Postgres and Redis', () => {
  let a: TestApp;
  let b: TestApp;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    const database = await createTestDatabaseUrl();
    drop = database.drop;
    const prefix = `turnpike-test:shared-${Date.now()}:`;
    a = await createTestApp({ databaseUrl: database.url!, redisKeyPrefix: prefix });
    b = await createTestApp({ databaseUrl: database.url!, redisKeyPrefix: prefix });
  });
  afterAll(async () => {
    await a.close();
    await b.close();
    await drop();
  });

  it('accepts on one replica a session made on the other', async () => {
    const onA = new ConsoleClient(a.app);
    await onA.post('/api/setup', { ...ROOT, confirmPassword: ROOT.password });
    expect((await onA.login(ROOT.username, ROOT.password)).json().success).toBe(true);
    const onB = new ConsoleClient(b.app);
    onB.cookie = onA.cookie;
    onB.userId = onA.userId;
    const self = await onB.get('/api/user/self');
    expect(self.statusCode).toBe(200);
    expect(self.json().data.username).toBe('root');
  });

  it('serves on one replica an option saved on the other within a second', async () => {
    const onA = new ConsoleClient(a.app);
    await onA.login(ROOT.username, ROOT.password);
    expect((await onA.put('/api/option/', { key: 'SystemName', value: 'Replicated' })).json().success).toBe(
      true,
    );
    const started = Date.now();
    let seen = '';
    while (Date.now() - started < 1000) {
      seen = (await b.app.inject({ method: 'GET', url: '/api/status' })).json().data.system_name;
      if (seen === 'Replicated') break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(seen).toBe('Replicated');
  });
});
