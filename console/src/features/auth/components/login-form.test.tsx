import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { getSessionUser } from '../../../lib/session.ts';
import { fakeServer, makeStatus, renderScreen } from '../../../testing/render.tsx';
import { LoginForm } from './login-form.tsx';

const user = { id: 1, username: 'root', display_name: 'Root', role: 100, status: 1, group: 'default' };
const withStatus = (overrides = {}) => ({
  'GET /api/status': () => ({ body: { success: true, data: makeStatus(overrides) } }),
});

describe('login screen', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('asks for username and password before sending anything', async () => {
    const server = fakeServer(withStatus());
    await renderScreen(() => <LoginForm />);
    await userEvent.click(screen.getByRole('button', { name: 'Sign in' }));
    expect(await screen.findByRole('alert')).toHaveProperty('textContent', 'Enter username and password');
    await userEvent.type(screen.getByLabelText('Username or email'), 'alice');
    await userEvent.click(screen.getByRole('button', { name: 'Sign in' }));
    expect(screen.getByRole('alert').textContent).toBe('Enter username and password');
    expect(server.callsTo('POST', '/api/user/login')).toHaveLength(0);
  });

  it('says the session expired when opened with expired=true', async () => {
    fakeServer(withStatus());
    await renderScreen(() => <LoginForm expired />);
    expect(screen.getByRole('alert').textContent).toBe(
      'Not logged in or session expired. Please login again!',
    );
  });

  it('stores the user and goes to /token after a successful login', async () => {
    const server = fakeServer({
      ...withStatus(),
      'POST /api/user/login': () => ({ body: { success: true, data: { ...user, username: 'alice' } } }),
    });
    const { router } = await renderScreen(() => <LoginForm />);
    await userEvent.type(screen.getByLabelText('Username or email'), ' alice ');
    await userEvent.type(screen.getByLabelText('Password'), 'secret-pass');
    await userEvent.click(screen.getByRole('button', { name: 'Sign in' }));
    await waitFor(() => expect(router.state.location.pathname).toBe('/token'));
    expect(server.callsTo('POST', '/api/user/login')[0]?.body).toEqual({
      username: 'alice',
      password: 'secret-pass',
    });
    expect(getSessionUser()?.username).toBe('alice');
  });

  it('shows the server message when the credentials are wrong', async () => {
    fakeServer({
      ...withStatus(),
      'POST /api/user/login': () => ({
        status: 400,
        body: { success: false, message: 'wrong username or password' },
      }),
    });
    await renderScreen(() => <LoginForm />);
    await userEvent.type(screen.getByLabelText('Username or email'), 'alice');
    await userEvent.type(screen.getByLabelText('Password'), 'nope-nope');
    await userEvent.click(screen.getByRole('button', { name: 'Sign in' }));
    expect(await screen.findByText('wrong username or password')).toBeTruthy();
    expect(getSessionUser()).toBeNull();
  });

  it('warns about the default root password right after login', async () => {
    fakeServer({ ...withStatus(), 'POST /api/user/login': () => ({ body: { success: true, data: user } }) });
    await renderScreen(() => <LoginForm />);
    await userEvent.type(screen.getByLabelText('Username or email'), 'root');
    await userEvent.type(screen.getByLabelText('Password'), '123456');
    await userEvent.click(screen.getByRole('button', { name: 'Sign in' }));
    expect(await screen.findByText('Default password in use')).toBeTruthy();
  });

  it('shows only the third-party buttons the status turns on', async () => {
    fakeServer(withStatus({ github_oauth: true, oidc_enabled: true }));
    await renderScreen(() => <LoginForm />);
    expect(await screen.findByRole('button', { name: 'Sign in with GitHub' })).toBeTruthy();
    expect(screen.getByRole('button', { name: 'Sign in with OIDC' })).toBeTruthy();
    expect(screen.queryByRole('button', { name: 'Sign in with LinuxDO' })).toBeNull();
    expect(screen.queryByRole('button', { name: 'Sign in with WeChat' })).toBeNull();
  });

  it('hides the password form when password login is off', async () => {
    fakeServer(withStatus({ password_login_enabled: false }));
    await renderScreen(() => <LoginForm />);
    expect(await screen.findByText('Password sign-in is turned off by the administrator.')).toBeTruthy();
    expect(screen.queryByLabelText('Password')).toBeNull();
  });
});
