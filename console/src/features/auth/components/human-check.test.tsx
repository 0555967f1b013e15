import { act, screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { fakeServer, makeStatus, renderScreen } from '../../../testing/render.tsx';
import { BindEmailDialog } from '../../personal/components/personal-dialogs.tsx';
import type { TurnstileApi } from './human-check.tsx';
import { LoginForm } from './login-form.tsx';
import { RegisterForm } from './register-form.tsx';
import { ResetRequestForm } from './reset-request-form.tsx';

/** A stand-in for Cloudflare's script: records the widget and lets the test answer the challenge. */
function fakeTurnstile() {
  const widgets: { sitekey: string; answer: (token: string) => void }[] = [];
  const turnstile: TurnstileApi = {
    render: (_element, options) => {
      widgets.push({ sitekey: options.sitekey, answer: options.callback });
      return `w${widgets.length}`;
    },
    remove: vi.fn(),
  };
  window.turnstile = turnstile;
  return {
    widgets,
    solve: (token: string) => act(() => widgets.at(-1)?.answer(token)),
  };
}

const checkOn = {
  'GET /api/status': () => ({
    body: { success: true, data: makeStatus({ turnstile_check: true, turnstile_site_key: 'site-key-1' }) },
  }),
};
const checkOff = { 'GET /api/status': () => ({ body: { success: true, data: makeStatus() } }) };
const humanCheckRunning = 'The human check is still running, please retry in a few seconds';
const user = { id: 3, username: 'alice', display_name: '', role: 1, status: 1, group: 'default' };

describe('human check (Turnstile)', () => {
  let captcha: ReturnType<typeof fakeTurnstile>;
  beforeEach(() => {
    captcha = fakeTurnstile();
  });
  afterEach(() => {
    vi.unstubAllGlobals();
    delete window.turnstile;
  });

  it('login waits for the check, then sends its token as ?turnstile=', async () => {
    const server = fakeServer({
      ...checkOn,
      'POST /api/user/login': () => ({ body: { success: true, data: user } }),
    });
    await renderScreen(() => <LoginForm />);
    await waitFor(() => expect(captcha.widgets).toHaveLength(1));
    expect(captcha.widgets[0]?.sitekey).toBe('site-key-1');
    await userEvent.type(screen.getByLabelText('Username or email'), 'alice');
    await userEvent.type(screen.getByLabelText('Password'), 'password-1');
    await userEvent.click(screen.getByRole('button', { name: 'Sign in' }));
    expect(screen.getByRole('alert').textContent).toBe(humanCheckRunning);
    expect(server.callsTo('POST', '/api/user/login')).toHaveLength(0);

    captcha.solve('token-abc');
    await userEvent.click(screen.getByRole('button', { name: 'Sign in' }));
    await waitFor(() => expect(server.callsTo('POST', '/api/user/login')).toHaveLength(1));
    expect(server.callsTo('POST', '/api/user/login')[0]?.url).toContain('turnstile=token-abc');
  });

  it('shows no widget and sends no token when the check is off', async () => {
    const server = fakeServer({
      ...checkOff,
      'POST /api/user/login': () => ({ body: { success: true, data: user } }),
    });
    await renderScreen(() => <LoginForm />);
    await screen.findByRole('button', { name: 'Sign in' });
    expect(screen.queryByTestId('turnstile')).toBeNull();
    await userEvent.type(screen.getByLabelText('Username or email'), 'alice');
    await userEvent.type(screen.getByLabelText('Password'), 'password-1');
    await userEvent.click(screen.getByRole('button', { name: 'Sign in' }));
    await waitFor(() => expect(server.callsTo('POST', '/api/user/login')).toHaveLength(1));
    expect(server.callsTo('POST', '/api/user/login')[0]?.url).not.toContain('turnstile');
  });

  it('registration needs the check before sending the form', async () => {
    const server = fakeServer({
      ...checkOn,
      'POST /api/user/register': () => ({ body: { success: true } }),
    });
    await renderScreen(() => <RegisterForm />);
    await waitFor(() => expect(captcha.widgets).toHaveLength(1));
    await userEvent.type(screen.getByLabelText('Username'), 'alice');
    await userEvent.type(screen.getByLabelText('Password'), 'password-1');
    await userEvent.type(screen.getByLabelText('Confirm password'), 'password-1');
    await userEvent.click(screen.getByRole('button', { name: 'Sign up' }));
    expect(screen.getByRole('alert').textContent).toBe(humanCheckRunning);
    expect(server.callsTo('POST', '/api/user/register')).toHaveLength(0);

    captcha.solve('token-reg');
    await userEvent.click(screen.getByRole('button', { name: 'Sign up' }));
    await waitFor(() => expect(server.callsTo('POST', '/api/user/register')).toHaveLength(1));
    expect(server.callsTo('POST', '/api/user/register')[0]?.url).toContain('turnstile=token-reg');
  });

  it('a token that expires has to be renewed before the next attempt', async () => {
    const server = fakeServer({
      ...checkOn,
      'GET /api/reset_password': () => ({ body: { success: true } }),
    });
    await renderScreen(() => <ResetRequestForm />);
    await waitFor(() => expect(captcha.widgets).toHaveLength(1));
    captcha.solve('token-1');
    captcha.solve('');
    await userEvent.type(screen.getByLabelText('Email'), 'alice@example.com');
    await userEvent.click(screen.getByRole('button', { name: 'Send reset email' }));
    expect(screen.getByRole('alert').textContent).toBe(humanCheckRunning);
    expect(server.callsTo('GET', '/api/reset_password')).toHaveLength(0);

    captcha.solve('token-2');
    await userEvent.click(screen.getByRole('button', { name: 'Send reset email' }));
    await waitFor(() => expect(server.callsTo('GET', '/api/reset_password')).toHaveLength(1));
    const url = server.callsTo('GET', '/api/reset_password')[0]?.url ?? '';
    expect(url).toContain('turnstile=token-2');
    expect(url).toContain('email=alice%40example.com');
  });

  it('binding an email asks the check before sending the code', async () => {
    const server = fakeServer({ ...checkOn, 'GET /api/verification': () => ({ body: { success: true } }) });
    await renderScreen(() => <BindEmailDialog open onClose={() => {}} onDone={() => {}} />);
    await waitFor(() => expect(captcha.widgets).toHaveLength(1));
    await userEvent.type(screen.getByLabelText('Email address'), 'alice@example.com');
    await userEvent.click(screen.getByRole('button', { name: 'Get code' }));
    expect(screen.getByRole('alert').textContent).toBe(humanCheckRunning);
    expect(server.callsTo('GET', '/api/verification')).toHaveLength(0);
    captcha.solve('token-mail');
    await userEvent.click(screen.getByRole('button', { name: 'Get code' }));
    await waitFor(() => expect(server.callsTo('GET', '/api/verification')).toHaveLength(1));
    expect(server.callsTo('GET', '/api/verification')[0]?.url).toContain('turnstile=token-mail');
  });
});
