import { type SmtpTestServer, startSmtpTestServer } from '@turnpike/core/testing/smtp-test-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ConsoleClient,
  createTestApp,
  createTestDatabaseUrl,
  registerUser,
  saveOption,
  setupRoot,
  type TestApp,
} from '../../testing/test-app.ts';

const codeIn = (body: string) => /verification code is: <strong>(\w{6})<\/strong>/.exec(body)?.[1];
const tokenIn = (body: string) => /token=([0-9a-f]{32})/.exec(body)?.[1];

describe('email verification, password reset and email binding', () => {
  let t: TestApp;
  let root: ConsoleClient;
  let smtp: SmtpTestServer;

  const get = (url: string) => t.app.inject({ method: 'GET', url });
  const setOption = (key: string, value: string) => saveOption(root, key, value);
  /** Asks for a code and returns it as read from the mail that arrived. */
  const mailedCode = async (email: string) => {
    const before = smtp.received.length;
    const sent = await get(`/api/verification?email=${encodeURIComponent(email)}`);
    expect(sent.json()).toMatchObject({ success: true });
    const mail = await smtp.next(before);
    expect(mail.to).toEqual([email.toLowerCase()]);
    return codeIn(mail.body)!;
  };

  beforeAll(async () => {
    smtp = await startSmtpTestServer();
    t = await createTestApp({ env: { CRITICAL_RATE_LIMIT: '1000' } });
    root = await setupRoot(t.app);
    await setOption('SMTPServer', '127.0.0.1');
    await setOption('SMTPPort', String(smtp.port));
    await setOption('SMTPFrom', 'noreply@turnpike.test');
    await setOption('ServerAddress', 'https://gateway.example.com');
    await setOption('SystemName', 'Turnpike Test');
  });
  afterAll(async () => {
    await t.close();
    await smtp.close();
  });

  describe('GET /api/verification', () => {
    it('mails a 6-character code valid for ten minutes', async () => {
      const before = smtp.received.length;
      const sent = await get('/api/verification?email=Ann@Example.com');
      expect(sent.statusCode).toBe(200);
      expect(sent.json()).toMatchObject({ success: true });
      const mail = await smtp.next(before);
      expect(mail.from).toBe('noreply@turnpike.test');
      expect(mail.to).toEqual(['ann@example.com']);
      expect(mail.subject).toBe('Turnpike Test email verification');
      expect(codeIn(mail.body)).toMatch(/^\w{6}$/);
      expect(mail.body).toContain('10 minutes');
    });

    it('refuses a second mail to the same address within 30 seconds', async () => {
      await mailedCode('bea@example.com');
      const before = smtp.received.length;
      const again = await get('/api/verification?email=bea@example.com');
      expect(again.statusCode).toBe(429);
      expect(again.json().message).toMatch(/wait 30 seconds/);
      expect(smtp.received.length).toBe(before);
    });

    it('refuses a missing or malformed address', async () => {
      const missing = await get('/api/verification');
      expect(missing.statusCode).toBe(400);
      expect(missing.json()).toMatchObject({ success: false, message: 'email is required' });
      const bad = await get('/api/verification?email=not-an-address');
      expect(bad.statusCode).toBe(400);
      expect(bad.json().message).toBe('email is not a valid address');
    });

    it('refuses an address already used by an account, without mailing', async () => {
      const client = await registerUser(t.app, 'cora');
      const code = await mailedCode('cora@example.com');
      expect(
        (await client.get(`/api/oauth/email/bind?email=cora@example.com&code=${code}`)).json().success,
      ).toBe(true);
      const before = smtp.received.length;
      const taken = await get('/api/verification?email=CORA@example.com');
      expect(taken.statusCode).toBe(409);
      expect(taken.json()).toMatchObject({ success: false, message: 'this email address is already in use' });
      expect(smtp.received.length).toBe(before);
    });

    it('honours the domain whitelist and the alias restriction', async () => {
      await setOption('EmailDomainWhitelist', 'example.com,corp.test');
      await setOption('EmailDomainRestrictionEnabled', 'true');
      await setOption('EmailAliasRestrictionEnabled', 'true');
      try {
        const before = smtp.received.length;
        const outside = await get('/api/verification?email=dan@elsewhere.org');
        expect(outside.statusCode).toBe(400);
        expect(outside.json().message).toBe(
          'email addresses at elsewhere.org are not accepted; the administrator allows only: example.com, corp.test',
        );
        for (const alias of ['dan+spam@example.com', 'd.an@example.com']) {
          const refused = await get(`/api/verification?email=${encodeURIComponent(alias)}`);
          expect(refused.statusCode).toBe(400);
          expect(refused.json().message).toMatch(/aliases are not accepted/);
        }
        expect(smtp.received.length).toBe(before);
        expect(await mailedCode('dan@corp.test')).toMatch(/^\w{6}$/);
      } finally {
        await setOption('EmailDomainRestrictionEnabled', 'false');
        await setOption('EmailAliasRestrictionEnabled', 'false');
      }
    });

    it('says so when mail is not configured or cannot be sent, and lets the user retry', async () => {
      await setOption('SMTPServer', '');
      const off = await get('/api/verification?email=eli@example.com');
      expect(off.statusCode).toBe(403);
      expect(off.json().message).toMatch(/outgoing mail is not configured/);

      // A port nobody listens on: the send fails.
      const dead = await startSmtpTestServer();
      const deadPort = dead.port;
      await dead.close();
      await setOption('SMTPServer', '127.0.0.1');
      await setOption('SMTPPort', String(deadPort));
      const failed = await get('/api/verification?email=eli@example.com');
      expect(failed.statusCode).toBe(502);
      expect(failed.json()).toMatchObject({
        success: false,
        message: 'the email could not be sent; try again later',
      });
      await setOption('SMTPPort', String(smtp.port));
      // The failed send did not start the 30-second wait.
      expect(await mailedCode('eli@example.com')).toMatch(/^\w{6}$/);
    });
  });

  describe('registration with email verification', () => {
    beforeAll(async () => {
      await setOption('EmailVerificationEnabled', 'true');
    });
    afterAll(async () => {
      await setOption('EmailVerificationEnabled', 'false');
    });
    const register = (username: string, extra: Record<string, unknown>) =>
      t.app.inject({
        method: 'POST',
        url: '/api/user/register',
        payload: { username, password: 'fay-password-1', password2: 'fay-password-1', ...extra },
      });

    it('needs the mailed code, accepts it once, and stores the address', async () => {
      const missing = await register('fay', { email: 'fay@example.com' });
      expect(missing.statusCode).toBe(400);
      expect(missing.json().message).toBe('an email address and its verification code are required');

      const code = await mailedCode('fay@example.com');
      const wrong = await register('fay', { email: 'fay@example.com', verification_code: 'zzzzzz' });
      expect(wrong.json()).toMatchObject({
        success: false,
        message: 'the verification code is wrong or has expired',
      });
      const good = await register('fay', { email: 'fay@example.com', verification_code: code });
      expect(good.json()).toMatchObject({ success: true });
      const again = await register('fay2', { email: 'fay@example.com', verification_code: code });
      expect(again.json().success).toBe(false);

      const fay = new ConsoleClient(t.app);
      expect((await fay.login('fay@example.com', 'fay-password-1')).json().success).toBe(true);
      expect((await fay.get('/api/user/self')).json().data.email).toBe('fay@example.com');
    });

    it('refuses a code for another address', async () => {
      const code = await mailedCode('gus@example.com');
      const other = await register('gus', { email: 'gus2@example.com', verification_code: code });
      expect(other.json()).toMatchObject({
        success: false,
        message: 'the verification code is wrong or has expired',
      });
    });

    it('refuses an expired code', async () => {
      const code = await mailedCode('hal@example.com');
      // Let the stored code run out now instead of in ten minutes (same KV store, same expiry mechanism).
      await t.runtime.deps.kv.set('verify:email:hal@example.com', code, 1);
      await new Promise((resolve) => setTimeout(resolve, 1200));
      const late = await register('hal', { email: 'hal@example.com', verification_code: code });
      expect(late.json()).toMatchObject({
        success: false,
        message: 'the verification code is wrong or has expired',
      });
    });

    it('throws a code away after five wrong guesses', async () => {
      const code = await mailedCode('ivy@example.com');
      for (let i = 0; i < 6; i++) {
        const guess = await register('ivy', { email: 'ivy@example.com', verification_code: `bad00${i}` });
        expect(guess.json().success).toBe(false);
      }
      const right = await register('ivy', { email: 'ivy@example.com', verification_code: code });
      expect(right.json()).toMatchObject({
        success: false,
        message: 'the verification code is wrong or has expired',
      });
    });

    it('keeps the code when the username is taken, so the user can pick another name', async () => {
      const code = await mailedCode('jon@example.com');
      const taken = await register('root', { email: 'jon@example.com', verification_code: code });
      expect(taken.statusCode).toBe(409);
      const good = await register('jon', { email: 'jon@example.com', verification_code: code });
      expect(good.json().success).toBe(true);
    });
  });

  describe('password reset', () => {
    const requestReset = (email: string) => get(`/api/reset_password?email=${encodeURIComponent(email)}`);
    const confirm = (email: string, token: string) =>
      t.app.inject({ method: 'POST', url: '/api/user/reset', payload: { email, token } });

    it('mails a link, sets a new random password once, and the old password stops working', async () => {
      const kim = await registerUser(t.app, 'kim', 'kim-password-1');
      const code = await mailedCode('kim@example.com');
      expect((await kim.get(`/api/oauth/email/bind?email=kim@example.com&code=${code}`)).json().success).toBe(
        true,
      );

      const before = smtp.received.length;
      const asked = await requestReset('KIM@example.com');
      expect(asked.json()).toMatchObject({
        success: true,
        message: 'if an account uses this email address, a password reset link has been sent to it',
      });
      const mail = await smtp.next(before);
      expect(mail.to).toEqual(['kim@example.com']);
      expect(mail.subject).toBe('Turnpike Test password reset');
      expect(mail.body).toContain('https://gateway.example.com/user/reset?email=kim%40example.com&token=');
      const token = tokenIn(mail.body)!;
      expect(token).toMatch(/^[0-9a-f]{32}$/);

      const wrong = await confirm('kim@example.com', 'f'.repeat(32));
      expect(wrong.statusCode).toBe(400);
      expect(wrong.json().message).toBe('the reset link is invalid or has expired');

      const reset = await confirm('kim@example.com', token);
      expect(reset.json()).toMatchObject({ success: true });
      const password = reset.json().data as string;
      expect(password).toMatch(/^\w{12}$/);
      expect((await new ConsoleClient(t.app).login('kim', 'kim-password-1')).json().success).toBe(false);
      expect((await new ConsoleClient(t.app).login('kim', password)).json().success).toBe(true);

      const reused = await confirm('kim@example.com', token);
      expect(reused.statusCode).toBe(400);
      expect(reused.json().message).toBe('the reset link is invalid or has expired');
      expect((await new ConsoleClient(t.app).login('kim', password)).json().success).toBe(true);
    });

    it('answers an unknown address exactly like a known one and mails nothing', async () => {
      const before = smtp.received.length;
      const asked = await requestReset('nobody@example.com');
      expect(asked.statusCode).toBe(200);
      expect(asked.json()).toEqual({
        success: true,
        message: 'if an account uses this email address, a password reset link has been sent to it',
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(smtp.received.length).toBe(before);
      const guessed = await confirm('nobody@example.com', '0'.repeat(32));
      expect(guessed.json().message).toBe('the reset link is invalid or has expired');
    });

    it('refuses to build a link without a server address, and a malformed request', async () => {
      await setOption('ServerAddress', '');
      try {
        const refused = await requestReset('kim@example.com');
        expect(refused.statusCode).toBe(403);
        expect(refused.json().message).toMatch(/server address/);
      } finally {
        await setOption('ServerAddress', 'https://gateway.example.com');
      }
      const noToken = await t.app.inject({
        method: 'POST',
        url: '/api/user/reset',
        payload: { email: 'kim@example.com' },
      });
      expect(noToken.statusCode).toBe(400);
      expect(noToken.json().message).toBe('the reset token is required');
    });
  });

  describe('GET /api/oauth/email/bind', () => {
    it('binds the address after the code, refusing a wrong code and visitors', async () => {
      const lea = await registerUser(t.app, 'lea');
      const code = await mailedCode('lea@example.com');
      const visitor = await get(`/api/oauth/email/bind?email=lea@example.com&code=${code}`);
      expect(visitor.statusCode).toBe(401);
      const wrong = await lea.get('/api/oauth/email/bind?email=lea@example.com&code=nope00');
      expect(wrong.statusCode).toBe(400);
      expect(wrong.json().message).toBe('the verification code is wrong or has expired');
      const missing = await lea.get('/api/oauth/email/bind?email=lea@example.com');
      expect(missing.json().message).toBe('the verification code is required');
      expect((await lea.get('/api/user/self')).json().data.email).toBe('');

      const bound = await lea.get(`/api/oauth/email/bind?email=lea@example.com&code=${code}`);
      expect(bound.json()).toMatchObject({ success: true });
      expect((await lea.get('/api/user/self')).json().data.email).toBe('lea@example.com');
    });

    it('refuses an address another account took after the code was sent', async () => {
      const max = await registerUser(t.app, 'max');
      const ned = await registerUser(t.app, 'ned2');
      const code = await mailedCode('shared@example.com');
      await t.runtime.deps.db.execute(
        `update users set email = 'shared@example.com' where id = ${ned.userId}`,
      );
      const taken = await max.get(`/api/oauth/email/bind?email=shared@example.com&code=${code}`);
      expect(taken.statusCode).toBe(409);
      expect((await max.get('/api/user/self')).json().data.email).toBe('');
    });
  });
});

describe('the strict rate limit on verification and reset', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { CRITICAL_RATE_LIMIT: '2', CRITICAL_RATE_LIMIT_DURATION: '60' } });
  });
  afterAll(async () => {
    await t.close();
  });

  it('answers 429 once an address has used up the limit', async () => {
    const call = (url: string) => t.app.inject({ method: 'GET', url, remoteAddress: '10.9.9.9' });
    expect((await call('/api/verification?email=bad')).statusCode).toBe(400);
    expect((await call('/api/reset_password?email=bad')).statusCode).toBe(400);
    const limited = await call('/api/verification?email=a@example.com');
    expect(limited.statusCode).toBe(429);
    expect(limited.json()).toMatchObject({ success: false, code: 'RATE_LIMITED' });
  });
});

/** Two replicas on one Postgres and Redis: a code or link mailed by one works on the other. */
const shared = Boolean(process.env.TEST_POSTGRES_URL && process.env.TEST_REDIS_URL);

describe.skipIf(!shared)('verification across two replicas sharing Redis', () => {
  let a: TestApp;
  let b: TestApp;
  let smtp: SmtpTestServer;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    smtp = await startSmtpTestServer();
    const database = await createTestDatabaseUrl();
    drop = database.drop;
    const prefix = `turnpike-test:verify-${Date.now()}:`;
    const env = { CRITICAL_RATE_LIMIT: '1000' };
    a = await createTestApp({ databaseUrl: database.url!, redisKeyPrefix: prefix, env });
    b = await createTestApp({ databaseUrl: database.url!, redisKeyPrefix: prefix, env });
    const root = await setupRoot(a.app);
    for (const [key, value] of [
      ['SMTPServer', '127.0.0.1'],
      ['SMTPPort', String(smtp.port)],
      ['SMTPFrom', 'noreply@turnpike.test'],
      ['ServerAddress', 'https://gateway.example.com'],
      ['EmailVerificationEnabled', 'true'],
    ]) {
      expect((await root.put('/api/option/', { key, value })).json().success).toBe(true);
    }
    // Option changes reach the other replica through Redis within a second.
    const deadline = Date.now() + 3000;
    while (!b.runtime.deps.options.get('EmailVerificationEnabled') && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  });
  afterAll(async () => {
    await a.close();
    await b.close();
    await drop();
    await smtp.close();
  });

  it('registers on one replica with a code sent by the other', async () => {
    const before = smtp.received.length;
    expect(
      (await a.app.inject({ method: 'GET', url: '/api/verification?email=rep@example.com' })).json().success,
    ).toBe(true);
    const code = codeIn((await smtp.next(before)).body)!;
    const registered = await b.app.inject({
      method: 'POST',
      url: '/api/user/register',
      payload: {
        username: 'rep',
        password: 'rep-password-1',
        password2: 'rep-password-1',
        email: 'rep@example.com',
        verification_code: code,
      },
    });
    expect(registered.json()).toMatchObject({ success: true });
  });

  it('resets a password on one replica with a link mailed by the other, once', async () => {
    const before = smtp.received.length;
    expect(
      (await b.app.inject({ method: 'GET', url: '/api/reset_password?email=rep@example.com' })).json()
        .success,
    ).toBe(true);
    const token = tokenIn((await smtp.next(before)).body)!;
    const confirm = (app: TestApp) =>
      app.app.inject({
        method: 'POST',
        url: '/api/user/reset',
        payload: { email: 'rep@example.com', token },
      });
    const reset = await confirm(a);
    expect(reset.json().success).toBe(true);
    expect((await new ConsoleClient(b.app).login('rep', reset.json().data)).json().success).toBe(true);
    expect((await confirm(b)).json().success).toBe(false);
  });
});
