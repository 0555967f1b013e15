import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  ConsoleClient,
  createTestApp,
  ROOT,
  saveOption,
  setupRoot,
  type TestApp,
} from '../testing/test-app.ts';

/** A local stand-in for Cloudflare's siteverify: `pass-*` tokens succeed, anything else fails. */
interface FakeSiteverify {
  readonly url: string;
  readonly calls: URLSearchParams[];
  close(): Promise<void>;
}

async function startFakeSiteverify(): Promise<FakeSiteverify> {
  const calls: URLSearchParams[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => {
      body += chunk.toString();
    });
    req.on('end', () => {
      const form = new URLSearchParams(body);
      calls.push(form);
      const success = req.method === 'POST' && (form.get('response') ?? '').startsWith('pass-');
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify(
          success ? { success: true } : { success: false, 'error-codes': ['invalid-input-response'] },
        ),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/turnstile/v0/siteverify`,
    calls,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('Turnstile human check', () => {
  let fake: FakeSiteverify;
  let t: TestApp;
  let root: ConsoleClient;

  const setOption = (key: string, value: string) => saveOption(root, key, value);
  const login = (query = '', cookie?: string) =>
    t.app.inject({
      method: 'POST',
      url: `/api/user/login${query}`,
      payload: ROOT,
      remoteAddress: '203.0.113.7',
      ...(cookie ? { headers: { cookie } } : {}),
    });

  beforeAll(async () => {
    fake = await startFakeSiteverify();
    t = await createTestApp({ env: { TURNSTILE_VERIFY_URL: fake.url, CRITICAL_RATE_LIMIT: '1000' } });
    root = await setupRoot(t.app);
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
  });
  beforeEach(() => {
    fake.calls.length = 0;
  });

  it('is not asked for and never called while switched off', async () => {
    expect((await login()).json().success).toBe(true);
    expect((await login('?turnstile=anything')).json().success).toBe(true);
    expect(fake.calls).toHaveLength(0);
  });

  describe('when switched on', () => {
    beforeAll(async () => {
      await setOption('TurnstileSiteKey', 'site-key-1');
      await setOption('TurnstileSecretKey', 'turnstile-secret-1');
      await setOption('TurnstileCheckEnabled', 'true');
    });
    afterAll(async () => {
      await setOption('TurnstileCheckEnabled', 'false');
    });

    it('refuses sign-in, registration, verification and reset without an answer, with a clear message', async () => {
      const calls = [
        login(),
        t.app.inject({
          method: 'POST',
          url: '/api/user/register',
          payload: { username: 'tina', password: 'tina-pass-1', password2: 'tina-pass-1' },
        }),
        t.app.inject({ method: 'GET', url: '/api/verification?email=tina@example.com' }),
        t.app.inject({ method: 'GET', url: '/api/reset_password?email=tina@example.com' }),
      ];
      for (const response of await Promise.all(calls)) {
        expect(response.statusCode).toBe(400);
        expect(response.json()).toEqual({
          success: false,
          message: 'the human check has not finished; wait a few seconds and try again',
          code: 'VALIDATION_FAILED',
        });
      }
      expect(fake.calls).toHaveLength(0);
      const nobody = await new ConsoleClient(t.app).login('tina', 'tina-pass-1');
      expect(nobody.json().success).toBe(false);
    });

    it('refuses a failed answer and sends the secret, the answer and the caller IP to siteverify', async () => {
      const failed = await login('?turnstile=bot-answer');
      expect(failed.statusCode).toBe(403);
      expect(failed.json()).toMatchObject({
        success: false,
        message: 'the human check failed; refresh the page and try again',
      });
      expect(failed.cookies.find((c) => c.name === 'session')).toBeUndefined();
      expect(fake.calls).toHaveLength(1);
      expect(Object.fromEntries(fake.calls[0]!)).toEqual({
        secret: 'turnstile-secret-1',
        response: 'bot-answer',
        remoteip: '203.0.113.7',
      });
    });

    it('lets a passed answer through and remembers the pass for the rest of the session', async () => {
      const passed = await login('?turnstile=pass-1');
      expect(passed.json()).toMatchObject({ success: true, data: { username: 'root' } });
      expect(fake.calls).toHaveLength(1);
      const session = passed.cookies.find((c) => c.name === 'session')!.value;

      // Same browser, no new answer: accepted without asking Cloudflare again.
      const again = await login('', `session=${session}`);
      expect(again.json().success).toBe(true);
      expect(fake.calls).toHaveLength(1);

      // Another browser must pass its own check.
      expect((await login()).statusCode).toBe(400);
    });

    it('registers a new user with a passed answer', async () => {
      const registered = await t.app.inject({
        method: 'POST',
        url: '/api/user/register?turnstile=pass-2',
        payload: { username: 'uma', password: 'uma-pass-12', password2: 'uma-pass-12' },
      });
      expect(registered.json()).toMatchObject({ success: true });
      expect(fake.calls.map((c) => c.get('response'))).toEqual(['pass-2']);
    });

    it('says the check is unavailable when siteverify cannot be reached', async () => {
      const down = await createTestApp({
        env: { TURNSTILE_VERIFY_URL: 'http://127.0.0.1:9/siteverify', CRITICAL_RATE_LIMIT: '1000' },
      });
      try {
        const downRoot = await setupRoot(down.app);
        for (const [key, value] of [
          ['TurnstileSiteKey', 'k'],
          ['TurnstileSecretKey', 's'],
          ['TurnstileCheckEnabled', 'true'],
        ] as const) {
          expect((await downRoot.put('/api/option/', { key, value })).json().success).toBe(true);
        }
        const response = await down.app.inject({
          method: 'POST',
          url: '/api/user/login?turnstile=pass-3',
          payload: ROOT,
        });
        expect(response.statusCode).toBe(502);
        expect(response.json().message).toBe(
          'the human check could not be verified right now; try again later',
        );
      } finally {
        await down.close();
      }
    });
  });
});
