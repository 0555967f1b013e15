import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ConsoleClient,
  createTestApp,
  registerUser,
  setupRoot,
  type TestApp,
} from '../testing/test-app.ts';

/** Issue 16, item 3: text Postgres refuses is a 400 in the envelope at the edge, never a 500 from a query. */
describe('text that cannot be stored is refused at the edge', () => {
  let t: TestApp;
  let root: ConsoleClient;
  let user: ConsoleClient;
  beforeAll(async () => {
    t = await createTestApp({ env: { CRITICAL_RATE_LIMIT: '10000', GLOBAL_API_RATE_LIMIT: '100000' } });
    root = await setupRoot(t.app);
    user = await registerUser(t.app, 'nuluser');
  });
  afterAll(async () => {
    await t.close();
  });

  const refused = (response: { statusCode: number; json(): unknown }, field: RegExp) => {
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({
      success: false,
      message: expect.stringMatching(field),
      code: 'VALIDATION_FAILED',
    });
  };

  // The requests of the issue, exactly, each as a caller allowed to make it.
  it('POST /api/user/login {"username":"a\\u0000b",...}', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/api/user/login',
      headers: { 'content-type': 'application/json' },
      payload: '{"username":"a\\u0000b","password":"whatever-1"}',
    });
    refused(response, /body field username contains a NUL byte/);
  });

  it('POST /api/user/topup {"key":"\\u0000"}', async () => {
    refused(await user.post('/api/user/topup', { key: '\u0000' }), /body field key/);
  });

  it.each(['/api/log/?username=%00', '/api/log/stat?username=%00', '/api/data/?username=%00'])(
    'GET %s',
    async (url) => {
      refused(await root.get(url), /query field username/);
    },
  );

  it('POST /api/channel/tag/enabled {"tag":"\\u0000"}', async () => {
    refused(await root.post('/api/channel/tag/enabled', { tag: '\u0000' }), /body field tag/);
  });

  it('refuses lone surrogates, NUL in keys, in nested fields and in path parameters alike', async () => {
    const send = (url: string, json: string) =>
      t.app.inject({
        method: 'POST',
        url,
        headers: {
          'content-type': 'application/json',
          cookie: root.cookie,
          'new-api-user': String(root.userId),
        },
        payload: json,
      });
    refused(
      await send('/api/user/login', '{"username":"\\ud800","password":"x-password"}'),
      /username.*surrogate/,
    );
    refused(await send('/api/user/login', '{"username":"ok","password":"x\\udc00y"}'), /password/);
    refused(await send('/api/channel/', '{"name":"c","extra":{"a\\u0000":1}}'), /body field extra\.a\\u0000/);
    refused(await send('/api/channel/batch', '{"ids":[1,"\\u0000"]}'), /body field ids\.1/);
    refused(await root.get('/api/user/%00'), /path field id/);
    refused(await root.get('/api/user/search?keyword=a%00b'), /query field keyword/);
    // Sent by the browser as the one-character string, a bare NUL as the whole body is refused too.
    const plain = await t.app.inject({
      method: 'POST',
      url: '/api/user/login',
      headers: { 'content-type': 'text/plain' },
      payload: '\u0000',
    });
    expect(plain.statusCode).toBeLessThan(500);
  });

  it('lets every other character through: the same requests without the refused text are answered as usual', async () => {
    const login = await t.app.inject({
      method: 'POST',
      url: '/api/user/login',
      payload: { username: 'a😀中b\u0001', password: 'whatever-1' },
    });
    expect(login.statusCode).toBe(400);
    expect(login.json().message).toMatch(/wrong username or password/);
    expect((await root.get('/api/log/?username=someone')).statusCode).toBe(200);
    expect((await root.post('/api/channel/tag/enabled', { tag: 'no-such-tag' })).statusCode).toBeLessThan(
      500,
    );
  });
});
