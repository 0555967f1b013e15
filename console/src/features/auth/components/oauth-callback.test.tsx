import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { getSessionUser, setSessionUser } from '../../../lib/session.ts';
import { fakeServer, renderScreen } from '../../../testing/render.tsx';
import { OAuthCallback } from './oauth-callback.tsx';

const user = { id: 7, username: 'github_7', display_name: 'Octo', role: 1, status: 1, group: 'default' };

describe('third-party sign-in callback', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('signs in with the answered user and goes to /token, replacing the callback in the history', async () => {
    const server = fakeServer({ 'GET /api/oauth/github': () => ({ body: { success: true, data: user } }) });
    const { router } = await renderScreen(() => <OAuthCallback provider="github" code="c0de" state="st" />, {
      path: '/oauth/github',
    });
    await waitFor(() => expect(router.state.location.pathname).toBe('/token'));
    expect(server.calls.map((c) => c.url)).toEqual(['/api/oauth/github?code=c0de&state=st']);
    expect(getSessionUser()).toEqual(user);
    expect(await screen.findByText('Signed in')).toBeTruthy();
    expect(router.history.length).toBe(1);
  });

  it('asks a user with a second factor for the code before signing in, as after a password', async () => {
    const server = fakeServer({
      'GET /api/oauth/github': () => ({
        body: {
          success: true,
          data: { require_2fa: true, flow_token: 'sealed-flow', expires_at: 1, passkey: false },
        },
      }),
      'POST /api/user/login/2fa': () => ({ body: { success: true, data: user } }),
    });
    const { router } = await renderScreen(() => <OAuthCallback provider="github" code="c0de" state="st" />, {
      path: '/oauth/github',
    });
    const code = await screen.findByLabelText('Code or backup code');
    expect(getSessionUser()).toBeNull();
    await userEvent.type(code, '287082');
    await userEvent.click(screen.getByRole('button', { name: 'Verify' }));
    await waitFor(() => expect(router.state.location.pathname).toBe('/token'));
    expect(getSessionUser()).toEqual(user);
    expect(server.callsTo('POST', '/api/user/login/2fa').map((c) => c.body)).toEqual([
      { code: '287082', flow_token: 'sealed-flow' },
    ]);
  });

  it('says the account is bound and goes to the personal page when the server answers "bind"', async () => {
    const me = { ...user, id: 3, username: 'alice' };
    setSessionUser(me);
    fakeServer({
      'GET /api/oauth/oidc': () => ({ body: { success: true, message: 'bind', data: user } }),
    });
    const { router } = await renderScreen(() => <OAuthCallback provider="oidc" code="c" state="s" />, {
      path: '/oauth/oidc',
    });
    await waitFor(() => expect(router.state.location.pathname).toBe('/personal'));
    expect(await screen.findByText('The account is now bound.')).toBeTruthy();
    expect(getSessionUser()).toEqual(me);
  });

  it('shows the server message and the way back to sign-in, and does not try the code again', async () => {
    const server = fakeServer({
      'GET /api/oauth/linuxdo': () => ({
        status: 403,
        body: { success: false, message: 'the sign-in state does not match; start the sign-in again' },
      }),
    });
    const { router } = await renderScreen(() => <OAuthCallback provider="linuxdo" code="c" state="s" />, {
      path: '/oauth/linuxdo',
    });
    expect((await screen.findByRole('alert')).textContent).toBe(
      'the sign-in state does not match; start the sign-in again',
    );
    expect(screen.queryByText('Processing…')).toBeNull();
    expect(getSessionUser()).toBeNull();
    expect(server.calls).toHaveLength(1);
    screen.getByRole('link', { name: 'Back to sign-in' }).click();
    await waitFor(() => expect(router.state.location.pathname).toBe('/login'));
  });

  it('shows a spinner and "Processing…" while the server answers', async () => {
    let answer: (value: Response) => void = () => {};
    vi.stubGlobal(
      'fetch',
      vi.fn(() => new Promise<Response>((resolve) => (answer = resolve))),
    );
    await renderScreen(() => <OAuthCallback provider="github" code="c" state="s" />, {
      path: '/oauth/github',
    });
    expect(screen.getByText('Processing…')).toBeTruthy();
    expect(screen.getByRole('status')).toBeTruthy();
    answer(new Response(JSON.stringify({ success: false, message: 'code expired' }), { status: 400 }));
    expect(await screen.findByText('code expired')).toBeTruthy();
  });

  it.each([
    ['code', { state: 's' }],
    ['state', { code: 'c' }],
  ])('without a %s in the address, says so and asks the server nothing', async (_missing, params) => {
    const server = fakeServer({});
    await renderScreen(
      () => <OAuthCallback provider="github" code={undefined} state={undefined} {...params} />,
      {
        path: '/oauth/github',
      },
    );
    expect((await screen.findByRole('alert')).textContent).toBe(
      'The sign-in came back incomplete (no code or state). Start the sign-in again.',
    );
    expect(screen.getByRole('link', { name: 'Back to sign-in' })).toBeTruthy();
    expect(server.calls).toHaveLength(0);
  });

  it('refuses a provider it does not know without a request', async () => {
    const server = fakeServer({});
    await renderScreen(() => <OAuthCallback provider="myspace" code="c" state="s" />, {
      path: '/oauth/myspace',
    });
    expect((await screen.findByRole('alert')).textContent).toBe('There is no sign-in with "myspace".');
    expect(server.calls).toHaveLength(0);
  });

  it('sends the single-use code once even when React runs the effect twice', async () => {
    const server = fakeServer({ 'GET /api/oauth/github': () => ({ body: { success: true, data: user } }) });
    const { router } = await renderScreen(() => <OAuthCallback provider="github" code="c" state="s" />, {
      path: '/oauth/github',
      strictMode: true,
    });
    await waitFor(() => expect(router.state.location.pathname).toBe('/token'));
    expect(server.calls).toHaveLength(1);
  });
});
