import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { getToasts } from '../../lib/toast.ts';
import { fakeServer, makeStatus } from '../../testing/render.tsx';
import { authorizeUrl, setLeaveFor, startRedirectSignIn } from './third-party.ts';

const status = makeStatus({
  github_oauth: true,
  github_client_id: 'gh-client',
  oidc_enabled: true,
  oidc_client_id: 'oidc-client',
  oidc_authorization_endpoint: 'https://idp.example.com/authorize',
  linuxdo_oauth: true,
  linuxdo_client_id: 'ld-client',
});
const origin = 'https://console.example.com';

describe('third-party authorization addresses', () => {
  it('sends GitHub the client id, the state and the user:email scope', () => {
    expect(authorizeUrl('github', status, 'st4te', origin)).toBe(
      'https://github.com/login/oauth/authorize?client_id=gh-client&state=st4te&scope=user:email',
    );
  });

  it('sends OIDC an encoded redirect back to /oauth/oidc and the openid profile email scope', () => {
    expect(authorizeUrl('oidc', status, 'st4te', origin)).toBe(
      'https://idp.example.com/authorize?client_id=oidc-client' +
        '&redirect_uri=https%3A%2F%2Fconsole.example.com%2Foauth%2Foidc' +
        '&response_type=code&scope=openid+profile+email&state=st4te',
    );
  });

  it('appends to an OIDC endpoint that already has a query', () => {
    const withQuery = { ...status, oidc_authorization_endpoint: 'https://idp.example.com/auth?tenant=t1' };
    expect(authorizeUrl('oidc', withQuery, 's', origin)).toMatch(
      /^https:\/\/idp\.example\.com\/auth\?tenant=t1&client_id=oidc-client&redirect_uri=/,
    );
  });

  it('sends LinuxDO a code request with the client id and the state', () => {
    expect(authorizeUrl('linuxdo', status, 'st4te', origin)).toBe(
      'https://connect.linux.do/oauth2/authorize?response_type=code&client_id=ld-client&state=st4te',
    );
  });

  it('encodes a state or client id that holds URL syntax', () => {
    const odd = { ...status, github_client_id: 'a b' };
    expect(authorizeUrl('github', odd, 'x&y=z', origin)).toBe(
      'https://github.com/login/oauth/authorize?client_id=a%20b&state=x%26y%3Dz&scope=user:email',
    );
  });
});

describe('starting a redirect sign-in', () => {
  const leave = vi.fn();
  beforeEach(() => setLeaveFor(leave));
  afterEach(() => {
    vi.unstubAllGlobals();
    leave.mockReset();
  });

  it('asks for a state with the stored invite code, then leaves for the provider with it', async () => {
    localStorage.setItem('aff', 'INV1');
    const server = fakeServer({ 'GET /api/oauth/state': () => ({ body: { success: true, data: 'st-9' } }) });
    await expect(startRedirectSignIn('linuxdo', status)).resolves.toBe(true);
    expect(server.calls.map((c) => c.url)).toEqual(['/api/oauth/state?aff=INV1']);
    expect(leave).toHaveBeenCalledWith(
      'https://connect.linux.do/oauth2/authorize?response_type=code&client_id=ld-client&state=st-9',
    );
  });

  it('asks for a state without aff when no invite code is stored', async () => {
    const server = fakeServer({ 'GET /api/oauth/state': () => ({ body: { success: true, data: 'st-1' } }) });
    await startRedirectSignIn('oidc', status);
    expect(server.calls.map((c) => c.url)).toEqual(['/api/oauth/state']);
    expect(leave).toHaveBeenCalledWith(
      `https://idp.example.com/authorize?client_id=oidc-client&redirect_uri=${encodeURIComponent(
        `${window.location.origin}/oauth/oidc`,
      )}&response_type=code&scope=openid+profile+email&state=st-1`,
    );
  });

  it('stays, without a request, when the provider has no client id', async () => {
    const server = fakeServer({});
    await expect(startRedirectSignIn('github', { ...status, github_client_id: '' })).resolves.toBe(false);
    expect(server.calls).toHaveLength(0);
    expect(leave).not.toHaveBeenCalled();
    expect(getToasts().some((t) => t.kind === 'error' && /not fully configured/.test(t.text))).toBe(true);
  });

  it('stays when the server refuses a state', async () => {
    fakeServer({
      'GET /api/oauth/state': () => ({ status: 400, body: { success: false, message: 'slow down' } }),
    });
    await expect(startRedirectSignIn('github', status)).resolves.toBe(false);
    expect(leave).not.toHaveBeenCalled();
    expect(getToasts().some((t) => t.text === 'slow down')).toBe(true);
  });
});
