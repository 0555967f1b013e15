import { passkeyCredentials } from '@turnpike/core/db/schema/index';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ConsoleClient,
  createTestApp,
  ROOT,
  registerUser,
  saveOption,
  setupRoot,
  type TestApp,
} from '../../testing/test-app.ts';

describe('sign-in and registration', () => {
  let t: TestApp;
  let root: ConsoleClient;
  beforeAll(async () => {
    t = await createTestApp({ env: { CRITICAL_RATE_LIMIT: '1000' } });
    root = await setupRoot(t.app);
  });
  afterAll(async () => {
    await t.close();
  });

  const setOption = (key: string, value: string) => saveOption(root, key, value);

  it('signs in by username or email and answers the short user', async () => {
    await registerUser(t.app, 'alice', 'alice-pass-1', { email: 'alice@example.com' });
    const byName = await new ConsoleClient(t.app).login('alice', 'alice-pass-1');
    expect(byName.json()).toMatchObject({
      success: true,
      data: { username: 'alice', role: 1, status: 1, group: 'default' },
    });
    expect(byName.body).not.toContain('password');
    const byEmail = await new ConsoleClient(t.app).login('alice@example.com', 'alice-pass-1');
    expect(byEmail.json().data.username).toBe('alice');
  });

  it('asks a user whose second factor is a passkey for it: the password alone starts no session', async () => {
    const owner = await registerUser(t.app, 'keyholder', 'keyholder-pass-1');
    await t.runtime.deps.db.insert(passkeyCredentials).values({
      userId: owner.userId ?? 0,
      credentialId: 'keyholder-credential',
      publicKey: 'pQECAyYgASFYIA',
    });
    const browser = new ConsoleClient(t.app);
    const answer = await browser.post('/api/user/login', {
      username: 'keyholder',
      password: 'keyholder-pass-1',
    });
    expect(answer.json()).toMatchObject({
      success: true,
      data: { require_2fa: true, passkey: true, flow_token: expect.any(String) },
    });
    browser.userId = owner.userId;
    expect((await browser.get('/api/user/self')).statusCode).toBe(401);
  });

  it('answers a wrong password and an unknown user the same way', async () => {
    const wrongPassword = await new ConsoleClient(t.app).login('alice', 'not-her-password');
    const unknownUser = await new ConsoleClient(t.app).login('nobody', 'not-her-password');
    expect(wrongPassword.statusCode).toBe(unknownUser.statusCode);
    expect(wrongPassword.json()).toEqual(unknownUser.json());
    expect(wrongPassword.json().success).toBe(false);
    expect(wrongPassword.cookies.find((c) => c.name === 'session')).toBeUndefined();
  });

  it('requires username and password to sign in', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/api/user/login',
      payload: { username: 'alice' },
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().message).toMatch(/enter username and password/);
  });

  it.each([
    [{ username: 'toolongusername1', password: 'password-1' }, /at most 12/],
    [{ username: 'bob', password: 'short' }, /at least 8/],
    [{ username: 'bob', password: 'password-1-that-is-way-long' }, /at most 20/],
    [{ username: 'bob', password: 'password-1', password2: 'password-2' }, /the two passwords differ/],
  ])('refuses registration %o', async (body, message) => {
    const response = await t.app.inject({ method: 'POST', url: '/api/user/register', payload: body });
    expect(response.statusCode).toBe(400);
    expect(response.json().message).toMatch(message);
    expect(
      await t.runtime.deps.db.query.users.findFirst({ where: (u, { eq }) => eq(u.username, 'bob') }),
    ).toBeUndefined();
  });

  it('refuses a taken username, including one of a deregistered user', async () => {
    const carol = await registerUser(t.app, 'carol');
    expect((await carol.delete('/api/user/self')).json().success).toBe(true);
    const again = await t.app.inject({
      method: 'POST',
      url: '/api/user/register',
      payload: { username: 'carol', password: 'password-1' },
    });
    expect(again.statusCode).toBe(409);
    expect(again.json().message).toMatch(/already taken/);
  });

  it('honours RegisterEnabled and PasswordRegisterEnabled', async () => {
    await setOption('RegisterEnabled', 'false');
    const closed = await t.app.inject({
      method: 'POST',
      url: '/api/user/register',
      payload: { username: 'dave', password: 'password-1' },
    });
    expect(closed.json()).toMatchObject({ success: false, code: 'FEATURE_DISABLED' });
    await setOption('RegisterEnabled', 'true');
    await setOption('PasswordRegisterEnabled', 'false');
    const noPassword = await t.app.inject({
      method: 'POST',
      url: '/api/user/register',
      payload: { username: 'dave', password: 'password-1' },
    });
    expect(noPassword.json()).toMatchObject({ success: false, code: 'FEATURE_DISABLED' });
    await setOption('PasswordRegisterEnabled', 'true');
  });

  it('honours PasswordLoginEnabled', async () => {
    await setOption('PasswordLoginEnabled', 'false');
    const refused = await new ConsoleClient(t.app).login(ROOT.username, ROOT.password);
    expect(refused.json()).toMatchObject({ success: false, code: 'FEATURE_DISABLED' });
    // The existing session keeps working, so an administrator can turn it back on.
    await setOption('PasswordLoginEnabled', 'true');
  });

  it('gives the new-user bonus, the invitee bonus and the inviter earnings with logs', async () => {
    await setOption('QuotaForNewUser', '1000');
    await setOption('QuotaForInvitee', '300');
    await setOption('QuotaForInviter', '700');
    const inviter = await registerUser(t.app, 'erin');
    const affCode = (await inviter.get('/api/user/aff')).json().data as string;
    expect(affCode).toMatch(/^[0-9A-Za-z]{4}$/);

    const invitee = await registerUser(t.app, 'frank', 'password-1', { aff_code: affCode });
    const frank = (await invitee.get('/api/user/self')).json().data;
    expect(frank).toMatchObject({ quota: 1300, inviter_id: inviter.userId });
    const erin = (await inviter.get('/api/user/self')).json().data;
    expect(erin).toMatchObject({ quota: 1000, aff_count: 1, aff_quota: 700, aff_history_quota: 700 });

    const logs = await t.runtime.deps.db.query.logs.findMany({
      where: (l, { eq }) => eq(l.userId, frank.id),
    });
    expect(logs.map((l) => l.type)).toEqual([4, 4]);
  });

  it('signs out by clearing the session', async () => {
    const client = await registerUser(t.app, 'grace');
    expect((await client.get('/api/user/self')).statusCode).toBe(200);
    await client.get('/api/user/logout');
    const after = await client.get('/api/user/self');
    expect(after.statusCode).toBe(401);
  });
});

describe('console authentication rules', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { CRITICAL_RATE_LIMIT: '1000' } });
    await setupRoot(t.app);
  });
  afterAll(async () => {
    await t.close();
  });

  it('refuses a session without the New-Api-User header, or naming someone else', async () => {
    const client = await registerUser(t.app, 'henry');
    const id = client.userId;
    client.userId = undefined;
    expect((await client.get('/api/user/self')).statusCode).toBe(401);
    client.userId = (id ?? 0) + 1000;
    const mismatch = await client.get('/api/user/self');
    expect(mismatch.statusCode).toBe(401);
    expect(mismatch.json().message).toMatch(/does not match/);
    client.userId = id;
    expect((await client.get('/api/user/self')).statusCode).toBe(200);
  });

  it('accepts the system access token with the header, and not after it is regenerated', async () => {
    const client = await registerUser(t.app, 'ivy');
    const token = (await client.get('/api/user/token')).json().data as string;
    expect(token).toHaveLength(32);
    const script = new ConsoleClient(t.app);
    script.accessToken = token;
    script.userId = client.userId;
    expect((await script.get('/api/user/self')).json().data.username).toBe('ivy');
    await client.get('/api/user/token');
    const stale = await script.get('/api/user/self');
    expect(stale.statusCode).toBe(401);
  });

  it('refuses a forged session cookie', async () => {
    const client = new ConsoleClient(t.app);
    client.cookie = 'session=bm90LWEtcmVhbC1zZXNzaW9uLWNvb2tpZS1hdC1hbGw';
    client.userId = 1;
    expect((await client.get('/api/user/self')).statusCode).toBe(401);
  });

  it('keeps a regular user out of root and admin routes', async () => {
    const client = await registerUser(t.app, 'jack');
    for (const [method, url] of [
      ['GET', '/api/option/'],
      ['PUT', '/api/option/'],
      ['POST', '/api/option/rest_model_ratio'],
      ['GET', '/api/group/'],
    ] as const) {
      const response = await client.request(
        method,
        url,
        method === 'GET' ? undefined : { key: 'SystemName', value: 'x' },
      );
      expect(response.statusCode, `${method} ${url}`).toBe(403);
    }
  });

  it('tags every answer with a request id and echoes a sane incoming one', async () => {
    const fresh = await t.app.inject({ method: 'GET', url: '/api/status' });
    expect(fresh.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const echoed = await t.app.inject({
      method: 'GET',
      url: '/api/status',
      headers: { 'x-request-id': 'trace-123' },
    });
    expect(echoed.headers['x-request-id']).toBe('trace-123');
  });
});
