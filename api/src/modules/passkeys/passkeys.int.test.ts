import { passkeyChallenges } from '@turnpike/core/db/schema/index';
import { eq } from 'drizzle-orm';
import { Secret, TOTP } from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSoftAuthenticator, type SoftAuthenticator } from '../../testing/soft-authenticator.ts';
import {
  ConsoleClient,
  createTestApp,
  registerUser,
  saveOption,
  setupRoot,
  type TestApp,
} from '../../testing/test-app.ts';

/**
 * Passkeys through the console API (docs/adr/0044), answered by a software authenticator built from the WebAuthn
 * specification; the same ceremonies in Chromium with its virtual authenticator are console/e2e/passkeys.e2e.test.ts.
 */
const ENV = { CRITICAL_RATE_LIMIT: '10000', GLOBAL_API_RATE_LIMIT: '100000' };
const ORIGIN = 'https://gateway.example';
const RP_ID = 'gateway.example';

describe('passkeys', () => {
  let t: TestApp;
  let root: ConsoleClient;
  let sequence = 0;

  beforeAll(async () => {
    t = await createTestApp({ env: ENV });
    root = await setupRoot(t.app);
  });
  afterAll(() => t.close());

  async function newUser() {
    sequence += 1;
    const name = `pk${sequence}`;
    const password = `pass-${name}-1`;
    return { name, password, client: await registerUser(t.app, name, password) };
  }

  async function register(client: ConsoleClient, authenticator: SoftAuthenticator, name?: string) {
    const begin = await client.post('/api/user/passkey/register/begin');
    expect(begin.json(), begin.body).toMatchObject({ success: true });
    const answer = authenticator.register(begin.json().data.options, ORIGIN);
    return client.post('/api/user/passkey/register/finish', { ...answer, ...(name ? { name } : {}) });
  }

  async function passwordless(authenticator: SoftAuthenticator, extra?: { verified?: boolean }) {
    const client = new ConsoleClient(t.app);
    const begin = await client.post('/api/user/passkey/login/begin');
    const answer = authenticator.assert(begin.json().data.options, ORIGIN, extra);
    const finish = await client.post('/api/user/passkey/login/finish', answer);
    if (finish.json().success) client.userId = finish.json().data.id;
    return { client, begin, finish, answer };
  }

  const isLive = async (client: ConsoleClient) => (await client.get('/api/user/self')).statusCode === 200;

  it('are unavailable until the server address names the site', async () => {
    const { client } = await newUser();
    const refused = await client.post('/api/user/passkey/register/begin');
    expect(refused.json()).toMatchObject({ success: false, code: 'FEATURE_DISABLED' });
    await saveOption(root, 'ServerAddress', ORIGIN);
  });

  it('registers several named passkeys for the site, ending the other sessions and keeping this one', async () => {
    const { name, password, client } = await newUser();
    const other = new ConsoleClient(t.app);
    await other.login(name, password);
    const begin = (await client.post('/api/user/passkey/register/begin')).json().data.options;
    expect(begin).toMatchObject({
      rp: { id: RP_ID, name: 'Turnpike' },
      user: { name, id: Buffer.from(String(client.userId)).toString('base64url') },
      authenticatorSelection: { residentKey: 'required', userVerification: 'preferred' },
    });
    const laptop = createSoftAuthenticator(RP_ID);
    const done = await client.post('/api/user/passkey/register/finish', {
      ...laptop.register(begin, ORIGIN),
      name: 'laptop',
    });
    expect(done.json(), done.body).toMatchObject({ success: true });
    expect(await isLive(client)).toBe(true);
    expect(await isLive(other)).toBe(false);

    expect((await register(client, createSoftAuthenticator(RP_ID))).json().success).toBe(true);
    const status = (await client.get('/api/user/passkey')).json().data;
    expect(status).toMatchObject({ enabled: true, last_used_at: null });
    expect(status.passkeys.map((p: { name: string }) => p.name).sort()).toEqual(['Passkey 2', 'laptop']);
    // The second begin excludes the passkeys already held, so an authenticator is not registered twice.
    const third = (await client.post('/api/user/passkey/register/begin')).json().data.options;
    expect(third.excludeCredentials.map((c: { id: string }) => c.id)).toContain(laptop.credentialId);
  });

  it('refuses an answer replayed, made for another site, or for a challenge never handed out', async () => {
    const { client } = await newUser();
    const key = createSoftAuthenticator(RP_ID);
    const options = (await client.post('/api/user/passkey/register/begin')).json().data.options;
    const answer = key.register(options, ORIGIN);
    expect((await client.post('/api/user/passkey/register/finish', answer)).json().success).toBe(true);
    const replay = await client.post('/api/user/passkey/register/finish', answer);
    expect(replay.json()).toMatchObject({ success: false, code: 'INVALID_CREDENTIALS' });

    const phished = createSoftAuthenticator(RP_ID);
    const options2 = (await client.post('/api/user/passkey/register/begin')).json().data.options;
    const elsewhere = await client.post(
      '/api/user/passkey/register/finish',
      phished.register(options2, 'https://gateway.example.evil'),
    );
    expect(elsewhere.json()).toMatchObject({ success: false });
    const invented = await client.post(
      '/api/user/passkey/register/finish',
      phished.register({ challenge: Buffer.from('made-up').toString('base64url'), rp: {} }, ORIGIN),
    );
    expect(invented.json()).toMatchObject({ success: false });
  });

  it('signs in without a password when the authenticator verified the user, once per challenge', async () => {
    const { name, client } = await newUser();
    const key = createSoftAuthenticator(RP_ID);
    expect((await register(client, key)).json().success).toBe(true);

    const { client: signedIn, begin, finish, answer } = await passwordless(key);
    expect(begin.json().data.options).toMatchObject({ rpId: RP_ID, userVerification: 'required' });
    expect(begin.json().data.options.allowCredentials ?? []).toEqual([]);
    expect(finish.json()).toMatchObject({ success: true, data: { username: name } });
    expect(await isLive(signedIn)).toBe(true);
    expect((await client.get('/api/user/passkey')).json().data.last_used_at).toEqual(expect.any(Number));

    const replay = await new ConsoleClient(t.app).post('/api/user/passkey/login/finish', answer);
    expect(replay.json()).toMatchObject({ success: false });

    // Presence without verification (a key without PIN) is one factor: not enough without the password.
    const unverified = await passwordless(key, { verified: false });
    expect(unverified.finish.json()).toMatchObject({ success: false, code: 'INVALID_CREDENTIALS' });
  });

  it('answers the second step after a password, for that user only', async () => {
    const { name, password, client } = await newUser();
    const key = createSoftAuthenticator(RP_ID);
    expect((await register(client, key)).json().success).toBe(true);
    const { secret } = (await client.post('/api/user/2fa/setup')).json().data;
    const totp = new TOTP({ secret: Secret.fromBase32(secret) });
    expect((await client.post('/api/user/2fa/enable', { code: totp.generate() })).json().success).toBe(true);

    const browser = new ConsoleClient(t.app);
    const step = (await browser.post('/api/user/login', { username: name, password })).json().data;
    expect(step).toMatchObject({ require_2fa: true, passkey: true });
    const begin = await browser.post('/api/user/passkey/login/begin', { flow_token: step.flow_token });
    const options = begin.json().data.options;
    expect(options.allowCredentials.map((c: { id: string }) => c.id)).toEqual([key.credentialId]);

    // Another user's passkey does not complete this user's sign-in.
    const stranger = await newUser();
    const strangerKey = createSoftAuthenticator(RP_ID);
    await register(stranger.client, strangerKey);
    const wrong = await browser.post('/api/user/passkey/login/finish', {
      ...strangerKey.assert(options, ORIGIN),
      flow_token: step.flow_token,
    });
    expect(wrong.json()).toMatchObject({ success: false });

    const again = (
      await browser.post('/api/user/passkey/login/begin', { flow_token: step.flow_token })
    ).json().data.options;
    const done = await browser.post('/api/user/passkey/login/finish', {
      ...key.assert(again, ORIGIN, { verified: false }),
      flow_token: step.flow_token,
    });
    expect(done.json(), done.body).toMatchObject({ success: true, data: { username: name } });
    browser.userId = done.json().data.id;
    expect(await isLive(browser)).toBe(true);
  });

  it('removes one passkey or all, ending other sessions; an administrator resets them', async () => {
    const { name, password, client } = await newUser();
    const first = createSoftAuthenticator(RP_ID);
    await register(client, first);
    await register(client, createSoftAuthenticator(RP_ID));
    const [one] = (await client.get('/api/user/passkey')).json().data.passkeys;
    expect((await client.put(`/api/user/passkey/${one.id}`, { name: 'renamed' })).json().success).toBe(true);
    const other = new ConsoleClient(t.app);
    await other.login(name, password);
    expect((await client.delete(`/api/user/passkey/${one.id}`)).json().success).toBe(true);
    expect(await isLive(other)).toBe(false);
    expect((await client.get('/api/user/passkey')).json().data.passkeys).toHaveLength(1);
    // Someone else's passkey id is not theirs to remove.
    const stranger = await newUser();
    expect((await stranger.client.delete(`/api/user/passkey/${one.id}`)).statusCode).toBe(404);

    expect((await root.get(`/api/user/${client.userId}/second_factors`)).json().data).toEqual({
      totp: false,
      passkeys: 1,
    });
    expect((await root.delete(`/api/user/${client.userId}/reset_passkey`)).json()).toMatchObject({
      success: true,
      data: { passkeys: 1 },
    });
    expect(await isLive(client)).toBe(false);
    expect((await passwordless(first)).finish.json().success).toBe(false);
  });

  it('keeps challenges server-side for five minutes; an expired one answers nothing and is swept', async () => {
    const { client } = await newUser();
    const key = createSoftAuthenticator(RP_ID);
    const options = (await client.post('/api/user/passkey/register/begin')).json().data.options;
    const db = t.runtime.deps.db;
    const [row] = await db
      .select()
      .from(passkeyChallenges)
      .where(eq(passkeyChallenges.challenge, options.challenge));
    expect(row).toMatchObject({ purpose: 'register', userId: client.userId });
    expect(row!.expiresAt - Math.floor(Date.now() / 1000)).toBeGreaterThan(290);
    await db
      .update(passkeyChallenges)
      .set({ expiresAt: Math.floor(Date.now() / 1000) - 1 })
      .where(eq(passkeyChallenges.challenge, options.challenge));
    const late = await client.post('/api/user/passkey/register/finish', key.register(options, ORIGIN));
    expect(late.json()).toMatchObject({ success: false });
    await client.post('/api/user/passkey/register/begin');
    expect(
      await db.select().from(passkeyChallenges).where(eq(passkeyChallenges.challenge, options.challenge)),
    ).toEqual([]);
  });
});
