/**
 * Budget windows an administrator sets: a user's in the user editor, every group's (and the time zone) in the
 * settings. Quota is 500,000 units per dollar (the QuotaPerUnit default the status answers).
 */
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { setSessionUser } from '../../../lib/session.ts';
import { fakeServer, makeStatus, renderScreen } from '../../../testing/render.tsx';
import { SettingsPage } from '../../settings/components/settings-page.tsx';
import type { UserRow } from '../../users/api/users.ts';
import { UsersPage } from '../../users/components/users-page.tsx';
import { nextMidnight } from '../testing/clock.ts';

/** A flow through a whole screen: slower than one check when the machine is busy. */
const SLOW = { timeout: 20_000 };

const alice: UserRow = {
  id: 2,
  username: 'alice',
  display_name: '',
  role: 1,
  status: 1,
  email: '',
  group: 'vip',
  quota: 500_000,
  used_quota: 0,
  request_count: 0,
  DeletedAt: null,
  quota_windows: [{ unit: 'requests', limit: 100, period: 'day' }],
};

function serveUsers(row: UserRow) {
  return fakeServer({
    'GET /api/status': () => ({ body: { success: true, data: makeStatus() } }),
    'GET /api/user/': () => ({ body: { success: true, data: { items: [row], total: 1, page: 1 } } }),
    'GET /api/group/': () => ({ body: { success: true, data: ['default', 'vip'] } }),
    'GET /api/user/2': () => ({ body: { success: true, data: row } }),
    'PUT /api/user/': () => ({ body: { success: true, data: row } }),
  });
}

const options: Record<string, string> = {
  GroupRatio: '{"default": 1, "vip": 0.5, "svip": 0.4}',
  RateLimitUserDefault: '{}',
  RateLimitGroups: '{}',
  GroupQuotaWindows: '{"vip":[{"unit":"quota","limit":2500000,"period":"day"}]}',
  QuotaWindowTimeZone: 'UTC',
};

function serveSettings() {
  return fakeServer({
    'GET /api/status': () => ({ body: { success: true, data: makeStatus() } }),
    'GET /api/option/': () => ({
      body: { success: true, data: Object.entries(options).map(([key, value]) => ({ key, value })) },
    }),
    'PUT /api/option/': () => ({ body: { success: true, message: '' } }),
  });
}

describe('budget windows an administrator sets', () => {
  beforeEach(() =>
    setSessionUser({ id: 1, username: 'root', display_name: 'Root', role: 100, status: 1, group: 'default' }),
  );
  afterEach(() => vi.unstubAllGlobals());

  it("edits a user's windows, showing what they and the group's have spent", SLOW, async () => {
    const midnight = nextMidnight();
    const server = serveUsers({
      ...alice,
      quota_window_states: [
        { unit: 'requests', period: 'day', limit: 100, used: 99, left: 1, reset_at: midnight },
      ],
      group_quota_windows: [{ unit: 'quota', limit: 2_500_000, period: 'day' }],
      group_quota_window_states: [
        {
          unit: 'quota',
          period: 'day',
          limit: 2_500_000,
          used: 2_000_000,
          left: 500_000,
          reset_at: midnight,
        },
      ],
    });
    const user = userEvent.setup({ delay: null });
    await renderScreen(() => <UsersPage />);
    await user.click(await screen.findByRole('button', { name: 'Edit alice' }));
    const sheet = within(await screen.findByRole('dialog'));
    const first = within(await sheet.findByRole('group', { name: 'Window 1' }));
    expect(first.getByText('Used 99 · 1 left · resets 00:00')).toBeTruthy();
    const group = within(sheet.getByRole('region', { name: /^Windows of the group vip/ }));
    expect(group.getByText('$4.00 of $5.00 today')).toBeTruthy();

    await user.click(sheet.getByRole('button', { name: 'Add window' }));
    const second = within(sheet.getByRole('group', { name: 'Window 2' }));
    await user.selectOptions(second.getByLabelText('Period'), 'week');
    await user.clear(second.getByLabelText('Limit ($)'));
    await user.type(second.getByLabelText('Limit ($)'), '20');
    await user.click(sheet.getByRole('button', { name: 'Submit' }));
    await waitFor(() => expect(server.callsTo('PUT', '/api/user/')).toHaveLength(1));
    expect(server.callsTo('PUT', '/api/user/')[0]?.body).toMatchObject({
      id: 2,
      quota_windows: [
        { unit: 'requests', limit: 100, period: 'day' },
        { unit: 'quota', limit: 10_000_000, period: 'week' },
      ],
    });
  });

  it('leaves the windows out of an edit that did not touch them', SLOW, async () => {
    const server = serveUsers(alice);
    const user = userEvent.setup({ delay: null });
    await renderScreen(() => <UsersPage />);
    await user.click(await screen.findByRole('button', { name: 'Edit alice' }));
    const sheet = within(await screen.findByRole('dialog'));
    await sheet.findByRole('group', { name: 'Window 1' });
    await user.click(sheet.getByRole('button', { name: 'Submit' }));
    await waitFor(() => expect(server.callsTo('PUT', '/api/user/')).toHaveLength(1));
    expect(server.callsTo('PUT', '/api/user/')[0]?.body).not.toHaveProperty('quota_windows');
  });

  it("saves the groups' windows and the time zone, refusing a zone that is not one", SLOW, async () => {
    const server = serveSettings();
    const user = userEvent.setup({ delay: null });
    await renderScreen(() => <SettingsPage tab="ratelimit" onTabChange={() => {}} />);
    const section = within(await screen.findByRole('region', { name: 'Budget windows per group' }));
    const vip = within(section.getByTestId('group-windows-vip'));
    expect((vip.getByLabelText('Limit ($)') as HTMLInputElement).value).toBe('5');

    const zone = section.getByLabelText('Time zone of day, week and month windows');
    await user.clear(zone);
    await user.type(zone, 'Mars/Olympus');
    await user.click(section.getByRole('button', { name: 'Save budget windows' }));
    expect(within(zone.parentElement as HTMLElement).getByRole('alert').textContent).toBe(
      'Not a time zone name: use one such as UTC or Asia/Shanghai',
    );
    expect(server.callsTo('PUT', '/api/option/')).toHaveLength(0);

    await user.clear(zone);
    await user.type(zone, 'Asia/Shanghai');
    await user.selectOptions(section.getByLabelText('Group'), 'svip');
    await user.click(section.getByRole('button', { name: 'Add windows for this group' }));
    const svip = within(section.getByTestId('group-windows-svip'));
    await user.click(svip.getByRole('button', { name: 'Add window' }));
    await user.selectOptions(svip.getByLabelText('Counts'), 'requests');
    await user.clear(svip.getByLabelText('Limit (requests)'));
    await user.type(svip.getByLabelText('Limit (requests)'), '1000');
    await user.click(section.getByRole('button', { name: 'Save budget windows' }));
    await waitFor(() => expect(server.callsTo('PUT', '/api/option/')).toHaveLength(2));
    const sent = Object.fromEntries(
      server.callsTo('PUT', '/api/option/').map((c) => {
        const { key, value } = c.body as { key: string; value: string };
        return [key, value];
      }),
    );
    expect(sent.QuotaWindowTimeZone).toBe('Asia/Shanghai');
    expect(JSON.parse(sent.GroupQuotaWindows ?? '')).toEqual({
      svip: [{ unit: 'requests', limit: 1000, period: 'day' }],
      vip: [{ unit: 'quota', limit: 2_500_000, period: 'day' }],
    });
  });
});
