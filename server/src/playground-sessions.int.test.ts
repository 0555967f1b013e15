import { buildApp } from '@turnpike/api';
import { registerRelay } from '@turnpike/relay';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConsoleClient, createTestApp, registerUser, setupRoot, type TestApp } from './testing/test-app.ts';

/** Sessions that end (issue 16, docs/adr/0020), as the playground of ROLE=all sees them; the rest is api/src/modules/auth/sessions.int.test.ts. */
const ENV = { CRITICAL_RATE_LIMIT: '10000', GLOBAL_API_RATE_LIMIT: '100000' };

describe('the playground honours ended sessions (ROLE=all: /api and /pg on one app)', () => {
  let t: TestApp;
  let app: FastifyInstance;
  beforeAll(async () => {
    t = await createTestApp({ env: ENV });
    app = await buildApp(t.runtime.deps);
    await registerRelay(app, t.runtime.deps, { flushIntervalMs: 20 });
    await app.ready();
    await setupRoot(app);
  });
  afterAll(async () => {
    await app.close();
    await t.close();
  });

  const playground = (client: ConsoleClient) =>
    client.post('/pg/chat/completions', {
      model: 'no-channel-model',
      messages: [{ role: 'user', content: 'hi' }],
    });

  it('refuses a signed-out cookie and a session ended by a password change, in OpenAI’s error shape', async () => {
    const user = await registerUser(app, 'pgses', 'pgses-pass-1');
    const saved = new ConsoleClient(app);
    saved.cookie = user.cookie;
    saved.userId = user.userId;
    // Live: the session passes (the request then fails for want of a channel, not of a session).
    expect((await playground(saved)).statusCode).not.toBe(401);
    await user.get('/api/user/logout');
    const ended = await playground(saved);
    expect(ended.statusCode).toBe(401);
    expect(ended.json()).toMatchObject({ error: { code: 'unauthenticated' } });

    const changer = new ConsoleClient(app);
    await changer.login('pgses', 'pgses-pass-1');
    const other = new ConsoleClient(app);
    await other.login('pgses', 'pgses-pass-1');
    await changer.put('/api/user/self', { password: 'pgses-pass-2', original_password: 'pgses-pass-1' });
    expect((await playground(other)).statusCode).toBe(401);
    expect((await playground(changer)).statusCode).not.toBe(401);
  });
});
