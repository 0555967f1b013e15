import { act, fireEvent, screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { fakeServer, makeStatus, renderScreen } from '../../../testing/render.tsx';
import { RegisterForm } from './register-form.tsx';

const withStatus = (overrides = {}) => ({
  'GET /api/status': () => ({ body: { success: true, data: makeStatus(overrides) } }),
});

async function fill(fields: Record<string, string>) {
  for (const [label, value] of Object.entries(fields))
    await userEvent.type(screen.getByLabelText(label), value);
  await userEvent.click(screen.getByRole('button', { name: 'Sign up' }));
}

describe('register screen', () => {
  afterEach(() => {
    vi.unstubAllGlobals();
    vi.useRealTimers();
  });

  it.each([
    [{ Username: 'bob' }, 'Username and password must not be empty'],
    [
      { Username: 'bob', Password: 'short', 'Confirm password': 'short' },
      'Password length must not be less than 8',
    ],
    [
      { Username: 'bob', Password: 'long-enough-1', 'Confirm password': 'long-enough-2' },
      'The two passwords differ',
    ],
    [
      { Username: 'bob', Password: 'a'.repeat(21), 'Confirm password': 'a'.repeat(21) },
      'Password must be at most 20 characters',
    ],
  ])('rejects %o with "%s" and sends nothing', async (fields, message) => {
    const server = fakeServer(withStatus());
    await renderScreen(() => <RegisterForm />);
    await fill(fields);
    expect((await screen.findByRole('alert')).textContent).toBe(message);
    expect(server.callsTo('POST', '/api/user/register')).toHaveLength(0);
  });

  it('requires email and code when email verification is on', async () => {
    const server = fakeServer(withStatus({ email_verification: true }));
    await renderScreen(() => <RegisterForm />);
    await screen.findByLabelText('Email');
    await fill({ Username: 'bob', Password: 'long-enough', 'Confirm password': 'long-enough' });
    expect(screen.getByRole('alert').textContent).toBe('Enter your email address');
    await fill({ Email: 'bob@example.com' });
    expect(screen.getByRole('alert').textContent).toBe('Enter the verification code');
    expect(server.callsTo('POST', '/api/user/register')).toHaveLength(0);
  });

  it('sends the code and waits 30 s before allowing a resend', async () => {
    const server = fakeServer({
      ...withStatus({ email_verification: true }),
      'GET /api/verification': () => ({ body: { success: true } }),
    });
    await renderScreen(() => <RegisterForm />);
    await userEvent.type(await screen.findByLabelText('Email'), 'bob@example.com');
    vi.useFakeTimers({ shouldAdvanceTime: true });
    fireEvent.click(screen.getByRole('button', { name: 'Send code' }));
    const wait = await screen.findByRole('button', { name: 'Resend (30 s)' });
    expect((wait as HTMLButtonElement).disabled).toBe(true);
    expect(server.callsTo('GET', '/api/verification')[0]?.url).toContain('email=bob%40example.com');
    for (let i = 0; i < 30; i++) await act(async () => vi.advanceTimersByTime(1000));
    await waitFor(() =>
      expect((screen.getByRole('button', { name: 'Send code' }) as HTMLButtonElement).disabled).toBe(false),
    );
  });

  it('registers with the stored invite code and goes to /login', async () => {
    localStorage.setItem('aff', 'INV1');
    const server = fakeServer({
      ...withStatus(),
      'POST /api/user/register': () => ({ body: { success: true } }),
    });
    const { router } = await renderScreen(() => <RegisterForm />);
    await fill({ Username: 'bob', Password: 'long-enough', 'Confirm password': 'long-enough' });
    await waitFor(() => expect(router.state.location.pathname).toBe('/login'));
    expect(server.callsTo('POST', '/api/user/register')[0]?.body).toMatchObject({
      username: 'bob',
      aff_code: 'INV1',
      password2: 'long-enough',
    });
  });

  it('says registration is closed when the status says so', async () => {
    fakeServer(withStatus({ register_enabled: false }));
    await renderScreen(() => <RegisterForm />);
    expect(await screen.findByText('New registrations are closed.')).toBeTruthy();
  });
});
