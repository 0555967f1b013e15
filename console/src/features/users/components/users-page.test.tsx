import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { setSessionUser } from '../../../lib/session.ts';
import { fakeServer, makeStatus, renderScreen } from '../../../testing/render.tsx';
import type { UserRow } from '../api/users.ts';
import { allowedActions } from '../rules.ts';
import { UsersPage } from './users-page.tsx';

const base: Omit<UserRow, 'id' | 'username' | 'role' | 'status'> = {
  display_name: '',
  email: '',
  group: 'default',
  quota: 500000,
  used_quota: 0,
  request_count: 0,
  DeletedAt: null,
};
const users: UserRow[] = [
  { ...base, id: 1, username: 'root', role: 100, status: 1 },
  { ...base, id: 2, username: 'alice', role: 1, status: 1, github_id: 'gh-alice', email: 'a@x.io' },
  { ...base, id: 3, username: 'bob', role: 10, status: 2 },
  { ...base, id: 4, username: 'gone', role: 1, status: 1, DeletedAt: '2026-01-01T00:00:00Z' },
];

function serve() {
  return fakeServer({
    'GET /api/status': () => ({ body: { success: true, data: makeStatus() } }),
    'GET /api/user/': () => ({
      body: { success: true, data: { items: users, total: users.length, page: 1 } },
    }),
    'GET /api/user/search': () => ({
      body: { success: true, data: { items: [users[1]], total: 1, page: 1 } },
    }),
    'GET /api/group/': () => ({ body: { success: true, data: ['default', 'vip'] } }),
    'GET /api/user/2': () => ({ body: { success: true, data: users[1] } }),
    'PUT /api/user/': () => ({ body: { success: true, data: users[1] } }),
    'POST /api/user/': () => ({ body: { success: true, data: { ...users[1], id: 9 } } }),
    'POST /api/user/manage': (call) => {
      const action = (call.body as { action: string }).action;
      return {
        body: {
          success: true,
          data: action === 'disable' ? { role: 1, status: 2 } : { role: 10, status: 1 },
        },
      };
    },
  });
}

const row = (name: string) => within(screen.getByText(name).closest('tr') as HTMLElement);

describe('user management', () => {
  beforeEach(() =>
    setSessionUser({ id: 1, username: 'root', display_name: 'Root', role: 100, status: 1, group: 'default' }),
  );
  afterEach(() => vi.unstubAllGlobals());

  it('applies the role rules to the action buttons', () => {
    const user = { role: 1, status: 1, DeletedAt: null };
    expect(allowedActions(100, user)).toEqual(['edit', 'promote', 'disable', 'delete']);
    // a regular admin cannot promote
    expect(allowedActions(10, user)).toEqual(['edit', 'disable', 'delete']);
    // same or higher level: nothing
    expect(allowedActions(10, { ...user, role: 10 })).toEqual([]);
    expect(allowedActions(100, { ...user, role: 100 })).toEqual([]);
    // root demotes an admin; a banned user can be enabled; status 3 cannot
    expect(allowedActions(100, { role: 10, status: 2, DeletedAt: null })).toEqual([
      'edit',
      'demote',
      'enable',
      'delete',
    ]);
    expect(allowedActions(100, { role: 1, status: 3, DeletedAt: null })).toEqual([
      'edit',
      'promote',
      'delete',
    ]);
    expect(allowedActions(100, { ...user, DeletedAt: '2026-01-01' })).toEqual([]);
  });

  it('lists users with the right buttons, none for root or a deregistered user', async () => {
    serve();
    await renderScreen(() => <UsersPage />);
    await screen.findByText('alice');
    expect(row('alice').getByRole('button', { name: 'Promote alice' })).toBeTruthy();
    expect(row('bob').getByRole('button', { name: 'Enable bob' })).toBeTruthy();
    expect(row('bob').getByRole('button', { name: 'Demote bob' })).toBeTruthy();
    expect(row('gone').queryAllByRole('button')).toHaveLength(0);
    expect(row('gone').getByText('Deregistered')).toBeTruthy();
    expect(screen.getAllByText('root').length).toBeGreaterThan(0);
    expect(
      within(screen.getAllByText('root')[0]?.closest('tr') as HTMLElement).queryAllByRole('button'),
    ).toHaveLength(0);
  });

  it('searches by keyword and group', async () => {
    const server = serve();
    await renderScreen(() => <UsersPage />);
    await screen.findByText('bob');
    await userEvent.type(screen.getByLabelText('Keyword'), 'ali');
    await userEvent.selectOptions(screen.getByLabelText('Group'), 'vip');
    await userEvent.click(screen.getByRole('button', { name: 'Search' }));
    await waitFor(() => expect(screen.queryByText('bob')).toBeNull());
    const url = server.callsTo('GET', '/api/user/search')[0]?.url ?? '';
    expect(url).toContain('keyword=ali');
    expect(url).toContain('group=vip');
  });

  it('asks before disabling and shows the status the server returns', async () => {
    const server = serve();
    await renderScreen(() => <UsersPage />);
    await screen.findByText('alice');
    await userEvent.click(row('alice').getByRole('button', { name: 'Disable alice' }));
    expect(await screen.findByText('Disable alice?')).toBeTruthy();
    await userEvent.click(screen.getByRole('button', { name: 'Cancel' }));
    expect(server.callsTo('POST', '/api/user/manage')).toHaveLength(0);
    await userEvent.click(row('alice').getByRole('button', { name: 'Disable alice' }));
    await userEvent.click(await screen.findByRole('button', { name: 'Confirm' }));
    await waitFor(() => expect(row('alice').getByText('Banned')).toBeTruthy());
    expect(row('alice').getByRole('button', { name: 'Enable alice' })).toBeTruthy();
    expect(server.callsTo('POST', '/api/user/manage')[0]?.body).toEqual({ id: 2, action: 'disable' });
  });

  it('requires username and password (8+) to add a user', async () => {
    const server = serve();
    await renderScreen(() => <UsersPage />);
    await screen.findByText('alice');
    await userEvent.click(screen.getByRole('button', { name: 'Add user' }));
    await userEvent.click(await screen.findByRole('button', { name: 'Submit' }));
    expect(screen.getByText('Username and password must not be empty')).toBeTruthy();
    await userEvent.type(screen.getByLabelText('Username'), 'carol');
    await userEvent.type(screen.getByLabelText('Password'), 'short');
    await userEvent.click(screen.getByRole('button', { name: 'Submit' }));
    expect(screen.getByText('The password must have at least 8 characters')).toBeTruthy();
    expect(server.callsTo('POST', '/api/user/')).toHaveLength(0);
    await userEvent.type(screen.getByLabelText('Password'), 'enough123');
    await userEvent.click(screen.getByRole('button', { name: 'Submit' }));
    await screen.findByText('User created');
    expect(server.callsTo('POST', '/api/user/')[0]?.body).toEqual({
      username: 'carol',
      display_name: '',
      password: 'shortenough123',
    });
  });

  it('edits a user: quota-add changes the field only, bindings are read-only, short passwords refused', async () => {
    const server = serve();
    await renderScreen(() => <UsersPage />);
    await screen.findByText('alice');
    await userEvent.click(row('alice').getByRole('button', { name: 'Edit alice' }));
    const quota = (await screen.findByLabelText('Remaining quota')) as HTMLInputElement;
    expect(quota.value).toBe('500000');
    expect((screen.getByLabelText('GitHub ID') as HTMLInputElement).readOnly).toBe(true);
    expect((screen.getByLabelText('GitHub ID') as HTMLInputElement).value).toBe('gh-alice');

    await userEvent.click(screen.getByRole('button', { name: 'Add quota' }));
    const amount = await screen.findByLabelText('Amount (negative to subtract)');
    await userEvent.click(screen.getByRole('button', { name: 'Confirm' }));
    expect(screen.getByText('Enter a whole amount')).toBeTruthy();
    await userEvent.type(amount, '-100000');
    await userEvent.click(screen.getByRole('button', { name: 'Confirm' }));
    await waitFor(() => expect(quota.value).toBe('400000'));
    expect(server.callsTo('PUT', '/api/user/')).toHaveLength(0);

    await userEvent.type(screen.getByLabelText('Password'), 'abc');
    await userEvent.click(screen.getByRole('button', { name: 'Submit' }));
    expect(screen.getByText('The password must have at least 8 characters')).toBeTruthy();
    await userEvent.clear(screen.getByLabelText('Password'));
    await userEvent.click(screen.getByRole('button', { name: 'Submit' }));
    await screen.findByText('User updated');
    expect(server.callsTo('PUT', '/api/user/')[0]?.body).toEqual({
      id: 2,
      username: 'alice',
      display_name: '',
      password: '',
      group: 'default',
      quota: 400000,
    });
  });

  it('opens the edit sheet of the user in the address (/user/edit/{id}) and reports when it closes', async () => {
    serve();
    const closed = vi.fn();
    await renderScreen(() => <UsersPage editId={2} onEditClosed={closed} />);
    expect(((await screen.findByLabelText('Remaining quota')) as HTMLInputElement).value).toBe('500000');
    expect((screen.getByLabelText('GitHub ID') as HTMLInputElement).value).toBe('gh-alice');
    await userEvent.click(within(screen.getByRole('dialog')).getByRole('button', { name: 'Close' }));
    expect(closed).toHaveBeenCalledOnce();
  });
});
