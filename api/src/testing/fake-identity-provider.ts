/**
 * A fake of the third-party sign-in providers for tests, on one plain node:http server speaking their real wire
 * formats:
 * - GitHub: `POST /login/oauth/access_token` (JSON in, JSON out with `Accept: application/json`; a bad code is a
 *   200 with `error`, as GitHub does) and `GET /user` with the bearer token;
 * - LinuxDO Connect: `POST /oauth2/token` (form body, HTTP Basic client credentials) and `GET /api/user`;
 * - an OIDC provider: `POST /oidc/token` (form body) and `GET /oidc/userinfo`;
 * - the WeChat server: `GET /api/wechat/user?code=` with the server token in `Authorization`.
 * Codes are registered with {@link FakeIdentityProvider.issue} and are single-use; every request is recorded.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeIdentityProvider {
  readonly url: string;
  /** Makes `code` good for one exchange, answering with `profile` (GitHub user, LinuxDO user, OIDC claims). */
  issue(code: string, profile: Record<string, unknown>): void;
  /** Makes `code` good for one WeChat check, answering with `openId`. */
  issueWeChat(code: string, openId: string): void;
  readonly requests: { path: string; headers: IncomingMessage['headers']; body: string }[];
  close(): Promise<void>;
}

export const FAKE_CLIENT = { id: 'client-id-1', secret: 'client-secret-1' } as const;
export const FAKE_WECHAT_TOKEN = 'wechat-server-token';

export async function startFakeIdentityProvider(): Promise<FakeIdentityProvider> {
  const codes = new Map<string, Record<string, unknown>>();
  const wechatCodes = new Map<string, string>();
  const tokens = new Map<string, Record<string, unknown>>();
  const requests: FakeIdentityProvider['requests'] = [];
  let sequence = 0;

  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
    res.end(JSON.stringify(body));
  };
  /** Trades a code for a bearer token; undefined when the code is unknown or spent. */
  const exchange = (code: unknown) => {
    const profile = typeof code === 'string' ? codes.get(code) : undefined;
    if (!profile) return undefined;
    codes.delete(code as string);
    sequence += 1;
    const token = `tok-${sequence}`;
    tokens.set(token, profile);
    return token;
  };
  const bearerProfile = (req: IncomingMessage) => {
    const match = /^Bearer (.+)$/.exec(req.headers.authorization ?? '');
    return match ? tokens.get(match[1] as string) : undefined;
  };

  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString();
    const url = new URL(req.url ?? '/', 'http://fake');
    requests.push({ path: url.pathname, headers: req.headers, body });
    const form = new URLSearchParams(body);

    if (req.method === 'POST' && url.pathname === '/login/oauth/access_token') {
      const input = JSON.parse(body || '{}') as Record<string, unknown>;
      if (input.client_id !== FAKE_CLIENT.id || input.client_secret !== FAKE_CLIENT.secret)
        return json(res, 200, { error: 'incorrect_client_credentials', error_description: 'bad client' });
      const token = exchange(input.code);
      if (!token)
        return json(res, 200, {
          error: 'bad_verification_code',
          error_description: 'The code passed is incorrect or expired.',
        });
      return json(res, 200, { access_token: token, token_type: 'bearer', scope: 'user:email' });
    }
    if (req.method === 'GET' && url.pathname === '/user') {
      const profile = bearerProfile(req);
      return profile ? json(res, 200, profile) : json(res, 401, { message: 'Bad credentials' });
    }
    if (req.method === 'POST' && (url.pathname === '/oauth2/token' || url.pathname === '/oidc/token')) {
      if (url.pathname === '/oauth2/token') {
        const basic = Buffer.from(`${FAKE_CLIENT.id}:${FAKE_CLIENT.secret}`).toString('base64');
        if (req.headers.authorization !== `Basic ${basic}`)
          return json(res, 401, { error: 'invalid_client' });
      } else if (
        form.get('client_id') !== FAKE_CLIENT.id ||
        form.get('client_secret') !== FAKE_CLIENT.secret
      ) {
        return json(res, 401, { error: 'invalid_client' });
      }
      if (form.get('grant_type') !== 'authorization_code')
        return json(res, 400, { error: 'unsupported_grant_type' });
      const token = exchange(form.get('code'));
      if (!token) return json(res, 400, { error: 'invalid_grant', error_description: 'code is invalid' });
      return json(res, 200, { access_token: token, token_type: 'Bearer', expires_in: 3600 });
    }
    if (req.method === 'GET' && (url.pathname === '/api/user' || url.pathname === '/oidc/userinfo')) {
      const profile = bearerProfile(req);
      return profile ? json(res, 200, profile) : json(res, 401, { error: 'invalid_token' });
    }
    if (req.method === 'GET' && url.pathname === '/api/wechat/user') {
      if (req.headers.authorization !== FAKE_WECHAT_TOKEN)
        return json(res, 200, { success: false, message: 'wrong token' });
      const code = url.searchParams.get('code') ?? '';
      const openId = wechatCodes.get(code);
      wechatCodes.delete(code);
      return openId
        ? json(res, 200, { success: true, message: '', data: openId })
        : json(res, 200, { success: false, message: 'the code is wrong or has expired' });
    }
    json(res, 404, { message: 'Not Found' });
  });
  server.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    issue: (code, profile) => codes.set(code, profile),
    issueWeChat: (code, openId) => wechatCodes.set(code, openId),
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
