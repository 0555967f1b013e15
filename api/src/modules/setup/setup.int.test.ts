import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConsoleClient, createTestApp, ROOT, type TestApp } from '../../testing/test-app.ts';

describe('first-run setup', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp();
  });
  afterEach(async () => {
    await t.close();
  });

  it('reports not set up, no root and the database kind on a fresh install', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/api/setup' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({
      success: true,
      message: '',
      data: { status: false, root_init: false, database_type: t.runtime.deps.dbKind },
    });
  });

  it('creates root, records the usage mode, and then refuses a second setup', async () => {
    const client = new ConsoleClient(t.app);
    const first = await client.post('/api/setup', {
      ...ROOT,
      confirmPassword: ROOT.password,
      SelfUseModeEnabled: true,
    });
    expect(first.json()).toMatchObject({ success: true });
    expect((await client.get('/api/setup')).json().data).toMatchObject({ status: true, root_init: true });
    expect(t.runtime.deps.options.get('SelfUseModeEnabled')).toBe(true);
    expect((await client.login(ROOT.username, ROOT.password)).json().data).toMatchObject({
      username: 'root',
      role: 100,
    });

    const second = await client.post('/api/setup', {
      username: 'other',
      password: 'another-pass',
      confirmPassword: 'another-pass',
    });
    expect(second.statusCode).toBe(400);
    expect(second.json()).toMatchObject({ success: false, code: 'ALREADY_SET_UP' });
  });

  it.each([
    [
      { username: ' ', password: 'long-enough', confirmPassword: 'long-enough' },
      'please enter the admin username',
    ],
    [
      { username: 'admin', password: 'short', confirmPassword: 'short' },
      'password must be at least 8 characters long',
    ],
    [
      { username: 'admin', password: 'long-enough', confirmPassword: 'different!' },
      'the two passwords entered do not match',
    ],
  ])('rejects %o with a clear message and sets nothing up', async (body, message) => {
    const response = await t.app.inject({ method: 'POST', url: '/api/setup', payload: body });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ success: false, message });
    expect((await t.app.inject({ method: 'GET', url: '/api/setup' })).json().data.status).toBe(false);
  });

  it('lets only one of several concurrent setups through', async () => {
    const attempts = await Promise.all(
      ['alpha', 'bravo', 'charlie'].map((username) =>
        t.app.inject({
          method: 'POST',
          url: '/api/setup',
          payload: { username, password: 'password-1', confirmPassword: 'password-1' },
        }),
      ),
    );
    expect(attempts.filter((r) => r.json().success)).toHaveLength(1);
    const roots = await t.runtime.deps.db.query.users.findMany();
    expect(roots).toHaveLength(1);
  });
});
