import { createHash, createHmac } from 'node:crypto';
import { passkeyCredentials, users } from '@turnpike/core/db/schema/index';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  FAKE_CLIENT,
  FAKE_WECHAT_TOKEN,
  type FakeIdentityProvider,
  startFakeIdentityProvider,
} from '../../testing/fake-identity-provider.ts';
import {
  ConsoleClient,
  createTestApp,
  registerUser,
  saveOption,
  setupRoot,
  type TestApp,
} from '../../testing/test-app.ts';

const BOT_TOKEN = '123456:telegram-bot-token';

/** The query a Telegram login widget sends, signed with the bot token as Telegram does. */
function telegramQuery(fields: Record<string, string>, botToken = BOT_TOKEN): string {
  const checkString = Object.keys(fields)
    .sort()
    .map((key) => `${key}=${fields[key]}`)
    .join('\n');
  const secret = createHash('sha256').update(botToken).digest();
  const hash = createHmac('sha256', secret).update(checkString).digest('hex');
  return new URLSearchParams({ ...fields, hash }).toString();
}

describe('third-party sign-in and binding', () => {
  let t: TestApp;
  let root: ConsoleClient;
  let idp: FakeIdentityProvider;

  const setOption = (key: string, value: string) => saveOption(root, key, value);
  const userRow = async (id: number) =>
    (await t.runtime.deps.db.select().from(users).where(eq(users.id, id)))[0]!;
  const userCount = async () => (await t.runtime.deps.db.select({ id: users.id }).from(users)).length;

  /** A browser that asks for a state, then comes back from the provider with `code`. */
  async function callback(client: ConsoleClient, provider: string, code: string, aff?: string) {
    const state = await client.get(`/api/oauth/state${aff ? `?aff=${aff}` : ''}`);
    expect(state.json()).toMatchObject({ success: true });
    return client.get(`/api/oauth/${provider}?code=${code}&state=${state.json().data}`);
  }

  beforeAll(async () => {
    idp = await startFakeIdentityProvider();
    t = await createTestApp({
      env: {
        CRITICAL_RATE_LIMIT: '1000',
        GITHUB_OAUTH_URL: idp.url,
        GITHUB_API_URL: idp.url,
        LINUXDO_CONNECT_URL: idp.url,
      },
    });
    root = await setupRoot(t.app);
    await setOption('ServerAddress', 'https://gateway.example.com');
    await setOption('QuotaForNewUser', '1000');
    await setOption('QuotaForInviter', '300');
    await setOption('GitHubClientId', FAKE_CLIENT.id);
    await setOption('GitHubClientSecret', FAKE_CLIENT.secret);
    await setOption('GitHubOAuthEnabled', 'true');
    await setOption('LinuxDOClientId', FAKE_CLIENT.id);
    await setOption('LinuxDOClientSecret', FAKE_CLIENT.secret);
    await setOption('LinuxDOOAuthEnabled', 'true');
    await setOption('oidc.client_id', FAKE_CLIENT.id);
    await setOption('oidc.client_secret', FAKE_CLIENT.secret);
    await setOption('oidc.token_endpoint', `${idp.url}/oidc/token`);
    await setOption('oidc.user_info_endpoint', `${idp.url}/oidc/userinfo`);
    await setOption('oidc.enabled', 'true');
    await setOption('WeChatServerAddress', idp.url);
    await setOption('WeChatServerToken', FAKE_WECHAT_TOKEN);
    await setOption('WeChatAuthEnabled', 'true');
    await setOption('TelegramBotToken', BOT_TOKEN);
    await setOption('TelegramOAuthEnabled', 'true');
  });
  afterAll(async () => {
    await t?.close();
    await idp?.close();
  });

  it('gives a 12-character state and keeps it in the session', async () => {
    const client = new ConsoleClient(t.app);
    const state = await client.get('/api/oauth/state');
    expect(state.json().data).toMatch(/^[A-Za-z0-9]{12}$/);
    expect(client.cookie).not.toBe('');
  });

  it('registers a GitHub user on first sign-in, with the bonuses and the inviter, and signs them in', async () => {
    const inviter = await registerUser(t.app, 'inviter1');
    const affCode = (await inviter.get('/api/user/aff')).json().data as string;
    idp.issue('gh-code-1', { login: 'octo-ann', id: 1, name: 'Ann Octo', email: 'ann@example.com' });
    const browser = new ConsoleClient(t.app);
    const signedIn = await callback(browser, 'github', 'gh-code-1', affCode);
    expect(signedIn.json()).toMatchObject({ success: true, message: '' });
    const user = signedIn.json().data;
    expect(user.username).toMatch(/^github_\d+$/);
    expect(user.display_name).toBe('Ann Octo');
    const row = await userRow(user.id);
    expect(row.githubId).toBe('octo-ann');
    expect(row.email).toBe('ann@example.com');
    expect(row.quota).toBe(1000);
    expect(row.inviterId).toBe(inviter.userId);
    expect((await userRow(inviter.userId!)).affCount).toBe(1);
    // The session is a real sign-in.
    browser.userId = user.id;
    expect((await browser.get('/api/user/self')).json()).toMatchObject({
      success: true,
      data: { id: user.id },
    });
    // What GitHub was sent: the client credentials and the code, then the token.
    const exchange = idp.requests.find((r) => r.path === '/login/oauth/access_token')!;
    expect(JSON.parse(exchange.body)).toEqual({
      client_id: FAKE_CLIENT.id,
      client_secret: FAKE_CLIENT.secret,
      code: 'gh-code-1',
    });

    // The same GitHub account signs in to the same user next time.
    idp.issue('gh-code-2', { login: 'octo-ann', id: 1, name: 'Ann Octo' });
    const again = await callback(new ConsoleClient(t.app), 'github', 'gh-code-2');
    expect(again.json()).toMatchObject({ success: true, data: { id: user.id } });
  });

  it('asks a user with a second factor for it after a third party signs them in, as after a password', async () => {
    idp.issue('gh-2fa-1', { login: 'octo-guarded', id: 77, name: 'Guarded' });
    const first = await callback(new ConsoleClient(t.app), 'github', 'gh-2fa-1');
    const userId = first.json().data.id as number;
    // The user adds a passkey (as its second factor); GitHub alone no longer signs them in.
    await t.runtime.deps.db.insert(passkeyCredentials).values({
      userId,
      credentialId: 'guarded-credential',
      publicKey: 'pQECAyYgASFYIA',
    });
    idp.issue('gh-2fa-2', { login: 'octo-guarded', id: 77, name: 'Guarded' });
    const browser = new ConsoleClient(t.app);
    const answer = await callback(browser, 'github', 'gh-2fa-2');
    expect(answer.json()).toMatchObject({
      success: true,
      data: { require_2fa: true, passkey: true, flow_token: expect.any(String) },
    });
    browser.userId = userId;
    expect((await browser.get('/api/user/self')).statusCode).toBe(401);
  });

  it('refuses a wrong, missing or spent state, and changes nothing', async () => {
    const before = await userCount();
    idp.issue('gh-state', { login: 'octo-state', id: 2 });
    const browser = new ConsoleClient(t.app);
    const noState = await browser.get('/api/oauth/github?code=gh-state&state=whatever');
    expect(noState.statusCode).toBe(403);
    expect(noState.json()).toMatchObject({ success: false, message: expect.stringMatching(/state/) });
    const state = (await browser.get('/api/oauth/state')).json().data;
    const wrong = await browser.get(`/api/oauth/github?code=gh-state&state=${state}x`);
    expect(wrong.statusCode).toBe(403);
    const right = await browser.get(`/api/oauth/github?code=gh-state&state=${state}`);
    expect(right.json()).toMatchObject({ success: true });
    // A state is good for one callback.
    idp.issue('gh-state-2', { login: 'octo-state-2', id: 3 });
    const reused = await browser.get(`/api/oauth/github?code=gh-state-2&state=${state}`);
    expect(reused.statusCode).toBe(403);
    expect(await userCount()).toBe(before + 1);
  });

  it('says so when the provider refuses the code, or the sign-in is off', async () => {
    const refused = await callback(new ConsoleClient(t.app), 'github', 'never-issued');
    expect(refused.statusCode).toBe(400);
    expect(refused.json().message).toMatch(/GitHub refused the sign-in code/);
    await setOption('GitHubOAuthEnabled', 'false');
    try {
      idp.issue('gh-off', { login: 'octo-off', id: 4 });
      const off = await callback(new ConsoleClient(t.app), 'github', 'gh-off');
      expect(off.statusCode).toBe(403);
      expect(off.json().message).toMatch(/not enabled/);
    } finally {
      await setOption('GitHubOAuthEnabled', 'true');
    }
  });

  it('binds GitHub to the signed-in user, and refuses an account bound to someone else', async () => {
    const bob = await registerUser(t.app, 'bob1');
    idp.issue('gh-bind', { login: 'octo-bob', id: 5 });
    const bound = await callback(bob, 'github', 'gh-bind');
    expect(bound.json()).toMatchObject({ success: true, message: 'bind', data: { id: bob.userId } });
    expect((await userRow(bob.userId!)).githubId).toBe('octo-bob');

    const carol = await registerUser(t.app, 'carol1');
    idp.issue('gh-steal', { login: 'octo-bob', id: 5 });
    const taken = await callback(carol, 'github', 'gh-steal');
    expect(taken.statusCode).toBe(409);
    expect((await userRow(carol.userId!)).githubId).toBe('');
  });

  it('refuses a disabled or deregistered holder, and registers nobody while registration is closed', async () => {
    idp.issue('gh-dan', { login: 'octo-dan', id: 6 });
    const dan = (await callback(new ConsoleClient(t.app), 'github', 'gh-dan')).json().data;
    await root.post('/api/user/manage', { id: dan.id, action: 'disable' });
    idp.issue('gh-dan-2', { login: 'octo-dan', id: 6 });
    const disabled = await callback(new ConsoleClient(t.app), 'github', 'gh-dan-2');
    expect(disabled.json()).toMatchObject({ success: false, message: 'this user has been disabled' });

    await setOption('RegisterEnabled', 'false');
    try {
      const before = await userCount();
      idp.issue('gh-new', { login: 'octo-new', id: 7 });
      const closed = await callback(new ConsoleClient(t.app), 'github', 'gh-new');
      expect(closed.json()).toMatchObject({ success: false, message: 'new registrations are closed' });
      expect(await userCount()).toBe(before);
    } finally {
      await setOption('RegisterEnabled', 'true');
    }
  });

  it('signs in with OIDC, taking the suggested username and the email', async () => {
    idp.issue('oidc-1', { sub: 'sub-123', email: 'eve@example.com', preferred_username: 'eve', name: 'Eve' });
    const signedIn = await callback(new ConsoleClient(t.app), 'oidc', 'oidc-1');
    expect(signedIn.json()).toMatchObject({ success: true, data: { username: 'eve', display_name: 'Eve' } });
    const row = await userRow(signedIn.json().data.id);
    expect(row).toMatchObject({ oidcId: 'sub-123', email: 'eve@example.com' });
    const token = new URLSearchParams(idp.requests.findLast((r) => r.path === '/oidc/token')!.body);
    expect(Object.fromEntries(token)).toEqual({
      client_id: FAKE_CLIENT.id,
      client_secret: FAKE_CLIENT.secret,
      code: 'oidc-1',
      grant_type: 'authorization_code',
      redirect_uri: 'https://gateway.example.com/oauth/oidc',
    });
    // A provider that leaves out the email is refused (the reference requires it).
    idp.issue('oidc-2', { sub: 'sub-456' });
    const noEmail = await callback(new ConsoleClient(t.app), 'oidc', 'oidc-2');
    expect(noEmail.statusCode).toBe(502);
  });

  it('signs in with LinuxDO by numeric id, and refuses a silenced account', async () => {
    idp.issue('ld-1', { id: 4242, username: 'frank', name: 'Frank', active: true, silenced: false });
    const signedIn = await callback(new ConsoleClient(t.app), 'linuxdo', 'ld-1');
    expect(signedIn.json()).toMatchObject({ success: true, data: { display_name: 'Frank' } });
    expect(signedIn.json().data.username).toMatch(/^linuxdo_\d+$/);
    expect((await userRow(signedIn.json().data.id)).linuxDoId).toBe('4242');
    const token = idp.requests.findLast((r) => r.path === '/oauth2/token')!;
    expect(token.headers.authorization).toBe(
      `Basic ${Buffer.from(`${FAKE_CLIENT.id}:${FAKE_CLIENT.secret}`).toString('base64')}`,
    );
    expect(new URLSearchParams(token.body).get('redirect_uri')).toBe(
      'https://gateway.example.com/oauth/linuxdo',
    );

    idp.issue('ld-2', { id: 4343, username: 'grace', active: true, silenced: true });
    const silenced = await callback(new ConsoleClient(t.app), 'linuxdo', 'ld-2');
    expect(silenced.statusCode).toBe(403);
  });

  it('signs in and binds with a WeChat code', async () => {
    idp.issueWeChat('123456', 'openid-heidi');
    const browser = new ConsoleClient(t.app);
    const signedIn = await browser.get('/api/oauth/wechat?code=123456');
    expect(signedIn.json().data.username).toMatch(/^wechat_\d+$/);
    expect((await userRow(signedIn.json().data.id)).wechatId).toBe('openid-heidi');
    const spent = await new ConsoleClient(t.app).get('/api/oauth/wechat?code=123456');
    expect(spent.json()).toMatchObject({
      success: false,
      message: expect.stringMatching(/WeChat verification failed/),
    });
    const empty = await new ConsoleClient(t.app).get('/api/oauth/wechat?code=');
    expect(empty.json()).toMatchObject({ success: false, message: 'the sign-in code is missing' });

    const ivan = await registerUser(t.app, 'ivan1');
    idp.issueWeChat('654321', 'openid-ivan');
    const bound = await ivan.get('/api/oauth/wechat/bind?code=654321');
    expect(bound.json()).toMatchObject({ success: true });
    expect((await userRow(ivan.userId!)).wechatId).toBe('openid-ivan');
  });

  it('signs in with Telegram only for a bound account, checking the signature and its age', async () => {
    const judy = await registerUser(t.app, 'judy1');
    const now = String(Math.floor(Date.now() / 1000));
    const fields = { id: '777', first_name: 'Judy', username: 'judy_tg', auth_date: now };

    const unbound = await new ConsoleClient(t.app).get(`/api/oauth/telegram/login?${telegramQuery(fields)}`);
    expect(unbound.json()).toMatchObject({
      success: false,
      message: expect.stringMatching(/no user has bound/),
    });

    // Binding is the widget's redirect: back to the personal settings.
    const bind = await judy.get(`/api/oauth/telegram/bind?${telegramQuery(fields)}`);
    expect(bind.statusCode).toBe(302);
    expect(bind.headers.location).toBe('/personal');
    expect((await userRow(judy.userId!)).telegramId).toBe('777');
    // The console's own call gets a JSON answer.
    const viaConsole = await t.app.inject({
      method: 'GET',
      url: `/api/oauth/telegram/bind?${telegramQuery(fields)}`,
      headers: { cookie: judy.cookie, accept: 'application/json' },
    });
    expect(viaConsole.json()).toMatchObject({ success: true });

    const browser = new ConsoleClient(t.app);
    const signedIn = await browser.get(`/api/oauth/telegram/login?${telegramQuery(fields)}&lang=en`);
    expect(signedIn.json()).toMatchObject({ success: true, data: { id: judy.userId } });

    const forged = await new ConsoleClient(t.app).get(
      `/api/oauth/telegram/login?${telegramQuery(fields, 'another-bot-token')}`,
    );
    expect(forged.json()).toMatchObject({
      success: false,
      message: expect.stringMatching(/could not be verified/),
    });
    const old = { ...fields, auth_date: String(Number(now) - 2 * 24 * 3600) };
    const stale = await new ConsoleClient(t.app).get(`/api/oauth/telegram/login?${telegramQuery(old)}`);
    expect(stale.json()).toMatchObject({ success: false, message: expect.stringMatching(/expired/) });
  });
});
