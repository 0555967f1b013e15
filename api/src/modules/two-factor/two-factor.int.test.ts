import { twoFas, users } from '@turnpike/core/db/schema/index';
import { eq, sql } from 'drizzle-orm';
import { Secret, TOTP } from 'otpauth';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  ConsoleClient,
  createTestApp,
  registerUser,
  saveOption,
  setupRoot,
  type TestApp,
} from '../../testing/test-app.ts';

/**
 * Two-factor sign-in through the console API (docs/adr/0044). Codes are made with the otpauth library from the
 * secret the set-up answered, as an authenticator app would; the clock is moved in 30-second steps, since a code
 * is accepted once per step.
 */
const ENV = { CRITICAL_RATE_LIMIT: '10000', GLOBAL_API_RATE_LIMIT: '100000' };
const START = Date.UTC(2030, 0, 1, 12, 0, 0);

const codeAt = (secret: string, ms: number) =>
  new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30, algorithm: 'SHA1' }).generate({
    timestamp: ms,
  });

describe('two-factor sign-in', () => {
  let t: TestApp;
  let root: ConsoleClient;
  let sequence = 0;
  let now = START;

  beforeAll(async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: START });
    t = await createTestApp({ env: ENV });
    root = await setupRoot(t.app);
  });
  afterAll(async () => {
    vi.useRealTimers();
    await t.close();
  });
  afterEach(() => nextStep());

  /** Moves the clock to the next 30-second step, so the next code is a new one. */
  function nextStep() {
    now += 30_000;
    vi.setSystemTime(now);
  }

  const code = (secret: string) => codeAt(secret, now);

  /** A new user with two-factor sign-in on; the password is `pass-<name>-1`. */
  async function enrolledUser() {
    sequence += 1;
    const name = `tf${sequence}`;
    const password = `pass-${name}-1`;
    const client = await registerUser(t.app, name, password);
    const setup = (await client.post('/api/user/2fa/setup')).json();
    expect(setup.success, JSON.stringify(setup)).toBe(true);
    const secret: string = setup.data.secret;
    const enabled = await client.post('/api/user/2fa/enable', { code: code(secret) });
    expect(enabled.json(), enabled.body).toMatchObject({ success: true });
    nextStep();
    return { name, password, client, secret, backupCodes: setup.data.backup_codes as string[] };
  }

  /** The password step: answers the body and the client (which holds no session afterwards). */
  async function passwordStep(name: string, password: string) {
    const client = new ConsoleClient(t.app);
    const answer = await client.post('/api/user/login', { username: name, password });
    return { client, answer };
  }

  async function secondStep(client: ConsoleClient, flowToken: string, input: string) {
    const answer = await client.post('/api/user/login/2fa', { code: input, flow_token: flowToken });
    if (answer.json().success) client.userId = answer.json().data.id;
    return answer;
  }

  async function signIn(name: string, password: string, secret: string) {
    const { client, answer } = await passwordStep(name, password);
    const done = await secondStep(client, answer.json().data.flow_token, code(secret));
    expect(done.json(), done.body).toMatchObject({ success: true });
    nextStep();
    return client;
  }

  const isLive = async (client: ConsoleClient) => (await client.get('/api/user/self')).statusCode === 200;

  it('enrols with a secret, a QR code URI and backup codes shown once; a wrong code does not turn it on', async () => {
    const client = await registerUser(t.app, 'enroller', 'pass-enroller-1');
    expect((await client.get('/api/user/2fa/status')).json().data).toMatchObject({ enabled: false });
    const setup = await client.post('/api/user/2fa/setup');
    expect(setup.headers['cache-control']).toBe('no-store');
    const { secret, qr_code_data, backup_codes } = setup.json().data;
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(qr_code_data).toMatch(/^otpauth:\/\/totp\/Turnpike:enroller\?/);
    expect(new URL(qr_code_data).searchParams.get('secret')).toBe(secret);
    expect(backup_codes).toHaveLength(10);
    // Nothing in the database shows the secret or a code in the clear.
    const [row] = await t.runtime.deps.db.select().from(twoFas).where(eq(twoFas.userId, client.userId!));
    expect(row?.secret).not.toContain(secret);

    const wrong = await client.post('/api/user/2fa/enable', {
      code: '000000' === code(secret) ? '111111' : '000000',
    });
    expect(wrong.json()).toMatchObject({ success: false, code: 'INVALID_CREDENTIALS' });
    expect((await client.get('/api/user/2fa/status')).json().data.enabled).toBe(false);
    // Password alone still signs in while enrolment is unfinished.
    const { answer } = await passwordStep('enroller', 'pass-enroller-1');
    expect(answer.json().data.require_2fa).toBeUndefined();

    const on = await client.post('/api/user/2fa/enable', { code: code(secret) });
    expect(on.json()).toMatchObject({ success: true });
    expect((await client.get('/api/user/2fa/status')).json().data).toEqual({
      enabled: true,
      locked: false,
      backup_codes_remaining: 10,
      enrolment_required: false,
    });
  });

  it('a right password alone gives no session; the code of the app does', async () => {
    const { name, password, secret } = await enrolledUser();
    const { client, answer } = await passwordStep(name, password);
    expect(answer.json()).toMatchObject({
      success: true,
      data: {
        require_2fa: true,
        flow_token: expect.any(String),
        expires_at: expect.any(Number),
        passkey: false,
      },
    });
    expect(answer.cookies.find((c) => c.name === 'session')).toBeUndefined();
    expect(client.cookie).toBe('');
    // Even with the user id header, nothing answers without the second step.
    client.userId = (await t.runtime.deps.db.select().from(users).where(eq(users.username, name)))[0]!.id;
    expect((await client.get('/api/user/self')).statusCode).toBe(401);

    const done = await secondStep(client, answer.json().data.flow_token, code(secret));
    expect(done.json()).toMatchObject({ success: true, data: { username: name } });
    expect(await isLive(client)).toBe(true);
  });

  it('refuses a wrong code, the same code twice, and a code of three steps ago', async () => {
    const { name, password, secret } = await enrolledUser();
    const first = await passwordStep(name, password);
    const flow = first.answer.json().data.flow_token;
    const right = code(secret);
    const wrong = right === '123456' ? '654321' : '123456';
    expect((await secondStep(first.client, flow, wrong)).json()).toMatchObject({
      success: false,
      code: 'INVALID_CREDENTIALS',
      message: 'the code is wrong or has expired',
    });
    expect((await secondStep(first.client, flow, right)).json().success).toBe(true);

    // The same code again, within its 30 seconds, from another browser that knows the password.
    const replay = await passwordStep(name, password);
    expect(
      (await secondStep(replay.client, replay.answer.json().data.flow_token, right)).json(),
    ).toMatchObject({
      success: false,
      message: 'this code has already been used; wait for the next one',
    });
    expect(await isLive(replay.client)).toBe(false);

    nextStep();
    nextStep();
    nextStep();
    const stale = await passwordStep(name, password);
    const old = codeAt(secret, now - 90_000);
    expect((await secondStep(stale.client, stale.answer.json().data.flow_token, old)).json().success).toBe(
      false,
    );
  });

  it('accepts each backup code once, and counts what is left', async () => {
    const { name, password, backupCodes, client: owner } = await enrolledUser();
    const [backup] = backupCodes as [string];
    const first = await passwordStep(name, password);
    const done = await secondStep(first.client, first.answer.json().data.flow_token, backup.toLowerCase());
    expect(done.json().success).toBe(true);
    const again = await passwordStep(name, password);
    expect(
      (await secondStep(again.client, again.answer.json().data.flow_token, backup)).json(),
    ).toMatchObject({
      success: false,
    });
    expect((await owner.get('/api/user/2fa/status')).json().data.backup_codes_remaining).toBe(9);
  });

  it('completes the second step from the cookie of the password step, as a browser without the token does', async () => {
    const { name, password, secret } = await enrolledUser();
    const { answer } = await passwordStep(name, password);
    const flowCookie = answer.cookies.find((c) => c.name === 'two_factor_flow');
    expect(flowCookie).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/api/user' });
    const done = await t.app.inject({
      method: 'POST',
      url: '/api/user/login/2fa',
      headers: { cookie: `two_factor_flow=${flowCookie!.value}` },
      payload: { code: code(secret) },
    });
    expect(done.json()).toMatchObject({ success: true, data: { username: name } });
    expect(done.cookies.find((c) => c.name === 'session')?.value).toBeTruthy();
  });

  it('a password step does not survive a password change, and expires after five minutes', async () => {
    const { name, password, secret, client } = await enrolledUser();
    const pending = await passwordStep(name, password);
    const changed = await client.put('/api/user/self', {
      password: 'pass-changed-1',
      original_password: password,
    });
    expect(changed.json().success).toBe(true);
    expect(
      (await secondStep(pending.client, pending.answer.json().data.flow_token, code(secret))).json(),
    ).toMatchObject({
      success: false,
      code: 'UNAUTHENTICATED',
    });
    nextStep();
    const late = await passwordStep(name, 'pass-changed-1');
    now += 301_000;
    vi.setSystemTime(now);
    expect(
      (await secondStep(late.client, late.answer.json().data.flow_token, code(secret))).json(),
    ).toMatchObject({
      success: false,
      code: 'UNAUTHENTICATED',
    });
  });

  it('ends the other sessions when it is turned on, new backup codes are made, or it is turned off', async () => {
    sequence += 1;
    const name = `tf${sequence}`;
    const password = `pass-${name}-1`;
    const changer = await registerUser(t.app, name, password);
    const other = new ConsoleClient(t.app);
    await other.login(name, password);
    const { secret } = (await changer.post('/api/user/2fa/setup')).json().data;
    expect(await isLive(other)).toBe(true);
    expect((await changer.post('/api/user/2fa/enable', { code: code(secret) })).json().success).toBe(true);
    nextStep();
    expect(await isLive(changer)).toBe(true);
    expect(await isLive(other)).toBe(false);

    const second = await signIn(name, password, secret);
    const made = await changer.post('/api/user/2fa/backup_codes', { code: code(secret) });
    nextStep();
    expect(made.json().data.backup_codes).toHaveLength(10);
    expect(await isLive(changer)).toBe(true);
    expect(await isLive(second)).toBe(false);

    const third = await signIn(name, password, secret);
    const off = await changer.post('/api/user/2fa/disable', { code: code(secret) });
    expect(off.json()).toMatchObject({ success: true });
    expect(await isLive(changer)).toBe(true);
    expect(await isLive(third)).toBe(false);
    // Off: the password alone signs in again.
    const plain = await passwordStep(name, password);
    expect(plain.answer.json().data).toMatchObject({ username: name });
  });

  it('locks the factor after five wrong codes, so the right one is refused until the lock ends', async () => {
    const { name, password, secret } = await enrolledUser();
    const { client, answer } = await passwordStep(name, password);
    const flow = answer.json().data.flow_token;
    const wrong = code(secret) === '000001' ? '000002' : '000001';
    for (let i = 0; i < 5; i++) expect((await secondStep(client, flow, wrong)).statusCode).toBe(400);
    const locked = await secondStep(client, flow, code(secret));
    expect(locked.statusCode).toBe(429);
    expect(locked.json().message).toMatch(/too many wrong codes; try again in 5 minutes/);
    now += 301_000;
    vi.setSystemTime(now);
    const fresh = await passwordStep(name, password);
    expect(
      (await secondStep(fresh.client, fresh.answer.json().data.flow_token, code(secret))).json().success,
    ).toBe(true);
  });

  it('counts wrong codes per client address across users', async () => {
    const from = (remoteAddress: string, flowToken: string, input: string) =>
      t.app.inject({
        method: 'POST',
        url: '/api/user/login/2fa',
        remoteAddress,
        payload: { code: input, flow_token: flowToken },
      });
    for (let u = 0; u < 4; u++) {
      const { name, password } = await enrolledUser();
      const flow = (await passwordStep(name, password)).answer.json().data.flow_token;
      for (let i = 0; i < 5; i++) await from('10.9.9.9', flow, 'ZZZZ-ZZZZ');
    }
    const { name, password, secret } = await enrolledUser();
    const flow = (await passwordStep(name, password)).answer.json().data.flow_token;
    const refused = await from('10.9.9.9', flow, code(secret));
    expect(refused.statusCode).toBe(429);
    expect(refused.json().message).toMatch(/from this address/);
    expect((await from('10.9.9.10', flow, code(secret))).json().success).toBe(true);
  });

  it("an administrator's reset removes the factor and ends the user's sessions", async () => {
    const { name, password, secret, client } = await enrolledUser();
    const signedIn = await signIn(name, password, secret);
    const id = client.userId!;
    expect((await root.get(`/api/user/${id}/second_factors`)).json().data).toEqual({
      totp: true,
      passkeys: 0,
    });
    const reset = await root.delete(`/api/user/${id}/2fa`);
    expect(reset.json()).toMatchObject({ success: true, data: { totp: true, passkeys: 0 } });
    expect(await isLive(signedIn)).toBe(false);
    expect(await isLive(client)).toBe(false);
    expect((await passwordStep(name, password)).answer.json().data).toMatchObject({ username: name });
    expect((await root.delete(`/api/user/${id}/2fa`)).json()).toMatchObject({ success: false });
    // A regular user cannot reset anyone's.
    const other = await enrolledUser();
    expect((await other.client.delete(`/api/user/${id}/2fa`)).statusCode).toBe(403);
    expect((await root.get('/api/user/2fa/stats')).json().data).toMatchObject({
      enabled_users: expect.any(Number),
    });
  });

  it('with AdminTwoFactorRequired on, an administrator without a second factor may only enrol', async () => {
    sequence += 1;
    const name = `adm${sequence}`;
    const admin = await registerUser(t.app, name, 'pass-admin-1');
    expect(
      (await root.post('/api/user/manage', { id: admin.userId, action: 'promote' })).json().success,
    ).toBe(true);
    await saveOption(root, 'AdminTwoFactorRequired', 'true');
    try {
      const signedIn = new ConsoleClient(t.app);
      const login = await signedIn.login(name, 'pass-admin-1');
      expect(login.json().data).toMatchObject({ username: name, require_2fa_setup: true });
      const refused = await signedIn.get('/api/user/');
      expect(refused.statusCode).toBe(403);
      expect(refused.json()).toMatchObject({ success: false, code: 'SECOND_FACTOR_REQUIRED' });
      expect((await signedIn.get('/api/user/self')).statusCode).toBe(200);
      expect((await signedIn.get('/api/user/2fa/status')).json().data.enrolment_required).toBe(true);
      // Root is an administrator too: the switch applies to it alike.
      expect((await root.get('/api/user/')).json().code).toBe('SECOND_FACTOR_REQUIRED');
      // A regular user is not asked.
      expect(
        (await (await registerUser(t.app, `u${name}`, 'pass-user-1')).get('/api/token/')).statusCode,
      ).toBe(200);

      const { secret } = (await signedIn.post('/api/user/2fa/setup')).json().data;
      expect((await signedIn.post('/api/user/2fa/enable', { code: code(secret) })).json().success).toBe(true);
      expect((await signedIn.get('/api/user/')).statusCode).toBe(200);
      expect((await signedIn.get('/api/user/2fa/status')).json().data.enrolment_required).toBe(false);
    } finally {
      // Root turns the switch off the way an operator without a second factor would: in the database.
      await t.runtime.deps.db.execute(
        sql`update options set value = 'false' where key = 'AdminTwoFactorRequired'`,
      );
      await t.runtime.deps.options.load();
    }
    expect((await root.get('/api/user/')).statusCode).toBe(200);
  });
});
