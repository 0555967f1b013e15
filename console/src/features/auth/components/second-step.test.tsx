import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { getSessionUser } from '../../../lib/session.ts';
import { fakeServer, makeStatus, renderScreen } from '../../../testing/render.tsx';
import { LoginForm } from './login-form.tsx';

const alice = { id: 2, username: 'alice', display_name: 'Alice', role: 1, status: 1, group: 'default' };
const secondStep = {
  require_2fa: true,
  flow_token: 'sealed-flow',
  expires_at: 1_900_000_000,
  passkey: false,
};

async function typePassword() {
  await userEvent.type(screen.getByLabelText('Username or email'), 'alice');
  await userEvent.type(screen.getByLabelText('Password'), 'secret-pass');
  await userEvent.click(screen.getByRole('button', { name: 'Sign in' }));
}

describe('two-factor sign-in on the login screen', () => {
  it('asks for the code after a right password, and signs in only once the code is accepted', async () => {
    const server = fakeServer({
      'GET /api/status': () => ({ body: { success: true, data: makeStatus() } }),
      'POST /api/user/login': () => ({ body: { success: true, data: secondStep } }),
      'POST /api/user/login/2fa': ({ body }) =>
        (body as { code: string }).code === '287082'
          ? { body: { success: true, data: alice } }
          : { status: 400, body: { success: false, message: 'the code is wrong or has expired' } },
    });
    const { router } = await renderScreen(() => <LoginForm />);
    await typePassword();
    const code = await screen.findByLabelText('Code or backup code');
    // The password alone stored no user: nothing is signed in yet.
    expect(getSessionUser()).toBeNull();
    expect(router.state.location.pathname).not.toBe('/token');

    await userEvent.type(code, '111111');
    await userEvent.click(screen.getByRole('button', { name: 'Verify' }));
    expect(await screen.findByText('the code is wrong or has expired')).toBeTruthy();
    expect(getSessionUser()).toBeNull();

    await userEvent.clear(code);
    await userEvent.type(code, '287082');
    await userEvent.click(screen.getByRole('button', { name: 'Verify' }));
    await waitFor(() => expect(router.state.location.pathname).toBe('/token'));
    expect(getSessionUser()?.username).toBe('alice');
    expect(server.callsTo('POST', '/api/user/login/2fa').map((c) => c.body)).toEqual([
      { code: '111111', flow_token: 'sealed-flow' },
      { code: '287082', flow_token: 'sealed-flow' },
    ]);
  });

  it('sends an administrator the site requires to enrol to the enrolment page', async () => {
    fakeServer({
      'GET /api/status': () => ({ body: { success: true, data: makeStatus() } }),
      'POST /api/user/login': () => ({
        body: { success: true, data: { ...alice, role: 10, require_2fa_setup: true } },
      }),
    });
    const { router } = await renderScreen(() => <LoginForm />);
    await typePassword();
    await waitFor(() => expect(router.state.location.pathname).toBe('/two-factor'));
  });
});
