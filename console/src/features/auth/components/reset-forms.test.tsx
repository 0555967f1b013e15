import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { fakeServer, renderScreen } from '../../../testing/render.tsx';
import { ResetConfirmForm } from './reset-confirm-form.tsx';
import { ResetRequestForm } from './reset-request-form.tsx';

describe('password reset', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('requires a valid email before sending', async () => {
    const server = fakeServer({});
    await renderScreen(() => <ResetRequestForm />);
    await userEvent.click(screen.getByRole('button', { name: 'Send reset email' }));
    expect(screen.getByRole('alert').textContent).toBe('Enter your email address');
    await userEvent.type(screen.getByLabelText('Email'), 'not-an-email');
    await userEvent.click(screen.getByRole('button', { name: 'Send reset email' }));
    expect(screen.getByRole('alert').textContent).toBe('Enter a valid email address');
    expect(server.callsTo('GET', '/api/reset_password')).toHaveLength(0);
  });

  it('sends the reset mail and disables the button for 30 s', async () => {
    const server = fakeServer({ 'GET /api/reset_password': () => ({ body: { success: true } }) });
    await renderScreen(() => <ResetRequestForm />);
    await userEvent.type(screen.getByLabelText('Email'), 'a@b.co');
    await userEvent.click(screen.getByRole('button', { name: 'Send reset email' }));
    const button = await screen.findByRole('button', { name: 'Retry (30 s)' });
    expect((button as HTMLButtonElement).disabled).toBe(true);
    expect(server.callsTo('GET', '/api/reset_password')).toHaveLength(1);
  });

  it('confirms with email and token and shows the new password', async () => {
    const server = fakeServer({
      'POST /api/user/reset': () => ({ body: { success: true, data: 'N3wPassw0rd' } }),
    });
    await renderScreen(() => <ResetConfirmForm email="a@b.co" token="tok" />);
    await userEvent.click(screen.getByRole('button', { name: 'Confirm reset' }));
    await waitFor(() =>
      expect((screen.getByLabelText('New password') as HTMLInputElement).value).toBe('N3wPassw0rd'),
    );
    expect(screen.getByRole('heading').textContent).toBe('Reset complete');
    expect(server.callsTo('POST', '/api/user/reset')[0]?.body).toEqual({ email: 'a@b.co', token: 'tok' });
  });

  it('refuses an incomplete link', async () => {
    const server = fakeServer({});
    await renderScreen(() => <ResetConfirmForm email="a@b.co" token="" />);
    await userEvent.click(screen.getByRole('button', { name: 'Confirm reset' }));
    expect(screen.getByRole('alert').textContent).toMatch('The reset link is incomplete');
    expect(server.calls).toHaveLength(0);
  });
});
