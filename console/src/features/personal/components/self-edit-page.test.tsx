import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { getSessionUser, setSessionUser } from '../../../lib/session.ts';
import { fakeServer, makeStatus, renderScreen } from '../../../testing/render.tsx';
import { SelfEditPage } from './self-edit-page.tsx';

const me = {
  id: 5,
  username: 'alice',
  display_name: 'Alice',
  role: 1,
  status: 1,
  email: '',
  group: 'default',
  quota: 0,
  used_quota: 0,
  request_count: 0,
  aff_code: '',
  aff_count: 0,
  aff_quota: 0,
  aff_history_quota: 0,
  github_id: '',
  oidc_id: '',
  wechat_id: '',
  telegram_id: '',
  linux_do_id: '',
  setting: '{}',
};

function serve(put: () => { status?: number; body: unknown } = () => ({ body: { success: true } })) {
  return fakeServer({
    'GET /api/status': () => ({ body: { success: true, data: makeStatus() } }),
    'GET /api/user/self': () => ({ body: { success: true, data: me } }),
    'PUT /api/user/self': put,
  });
}

const save = () => userEvent.click(screen.getByRole('button', { name: 'Save' }));

describe('edit own profile (/user/edit)', () => {
  beforeEach(() =>
    setSessionUser({ id: 5, username: 'alice', display_name: 'Alice', role: 1, status: 1, group: 'default' }),
  );
  afterEach(() => vi.unstubAllGlobals());

  it('says nothing changed and sends nothing when saved untouched', async () => {
    const server = serve();
    await renderScreen(() => <SelfEditPage />);
    await screen.findByDisplayValue('alice');
    await save();
    expect(await screen.findByText('You seem not to have changed anything')).toBeTruthy();
    expect(server.callsTo('PUT', '/api/user/self')).toHaveLength(0);
  });

  it('sends only the changed display name and updates the stored user', async () => {
    const server = serve();
    await renderScreen(() => <SelfEditPage />);
    const name = await screen.findByLabelText('Display name');
    await userEvent.clear(name);
    await userEvent.type(name, 'Alice L.');
    await save();
    await waitFor(() => expect(server.callsTo('PUT', '/api/user/self')).toHaveLength(1));
    expect(server.callsTo('PUT', '/api/user/self')[0]?.body).toEqual({ display_name: 'Alice L.' });
    await waitFor(() => expect(getSessionUser()?.display_name).toBe('Alice L.'));
  });

  it.each([
    [{ Username: '' }, 'Enter a username'],
    [{ Username: 'a-very-long-name' }, 'The username must have at most 12 characters'],
    [
      { 'New password': 'new-pass-1', 'Confirm new password': 'new-pass-1' },
      'Enter your current password to set a new one',
    ],
    [
      { 'Current password': 'old-pass-1', 'New password': 'short', 'Confirm new password': 'short' },
      'The password must have at least 8 characters',
    ],
    [
      {
        'Current password': 'old-pass-1',
        'New password': 'new-pass-1',
        'Confirm new password': 'new-pass-2',
      },
      'The two passwords differ',
    ],
  ])('refuses %o with "%s"', async (fields, message) => {
    const server = serve();
    await renderScreen(() => <SelfEditPage />);
    await screen.findByDisplayValue('alice');
    for (const [label, value] of Object.entries(fields)) {
      const input = screen.getByLabelText(label);
      await userEvent.clear(input);
      if (value) await userEvent.type(input, value);
    }
    await save();
    expect(screen.getByRole('alert').textContent).toBe(message);
    expect(server.callsTo('PUT', '/api/user/self')).toHaveLength(0);
  });

  it('changes the password with the current one and shows the server refusal', async () => {
    const server = serve(() => ({ body: { success: false, message: 'the current password is wrong' } }));
    await renderScreen(() => <SelfEditPage />);
    await screen.findByDisplayValue('alice');
    await userEvent.type(screen.getByLabelText('Current password'), 'old-pass-1');
    await userEvent.type(screen.getByLabelText('New password'), 'new-pass-1');
    await userEvent.type(screen.getByLabelText('Confirm new password'), 'new-pass-1');
    await save();
    await waitFor(() => expect(screen.getByRole('alert').textContent).toBe('the current password is wrong'));
    expect(server.callsTo('PUT', '/api/user/self')[0]?.body).toEqual({
      password: 'new-pass-1',
      original_password: 'old-pass-1',
    });
  });
});
