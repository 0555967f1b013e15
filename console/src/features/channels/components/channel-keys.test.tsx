import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { parseChannelInfo } from '@turnpike/core/channels/multi-key';
import type { KeyStatusPage } from '@turnpike/core/contracts/channels';
import i18next from 'i18next';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { setSessionUser } from '../../../lib/session.ts';
import { type FakeCall, fakeServer, makeStatus, renderScreen } from '../../../testing/render.tsx';
import type { ChannelView } from '../api/channels.ts';
import { channelView } from '../testing/channel-view.ts';
import { ChannelsPage } from './channels-page.tsx';

const pool: ChannelView = channelView({
  id: 7,
  name: 'pool',
  channel_info: {
    ...parseChannelInfo(null),
    is_multi_key: true,
    multi_key_size: 3,
    multi_key_status_list: { 1: 3 },
    multi_key_mode: 'polling',
  },
});

const keyPage: KeyStatusPage = {
  keys: [
    { index: 0, status: 1, disabled_reason: '', disabled_time: 0, key_preview: 'sk-pr…aaaa' },
    {
      index: 1,
      status: 3,
      disabled_reason: 'upstream answered 401 Unauthorized',
      disabled_time: 1_700_000_000,
      key_preview: 'sk-pr…bbbb',
    },
    { index: 2, status: 1, disabled_reason: '', disabled_time: 0, key_preview: 'sk-pr…cccc' },
  ],
  total: 3,
  page: 1,
  page_size: 20,
  total_pages: 1,
  enabled_count: 2,
  manual_disabled_count: 0,
  auto_disabled_count: 1,
  multi_key_mode: 'polling',
};

function serve() {
  const ok = (data: unknown) => ({ body: { success: true, message: '', data } });
  return fakeServer({
    'GET /api/status': () => ok(makeStatus()),
    'GET /api/channel/': () => ok({ items: [pool], total: 1, page: 1, page_size: 10 }),
    'GET /api/group/': () => ok(['default']),
    'GET /api/channel/models_enabled': () => ok(['gpt-4o']),
    'GET /api/channel/models': () => ok([{ id: 'gpt-4o' }]),
    'GET /api/channel/test/progress': () =>
      ok({ running: false, done: 0, total: 0, failed: 0, started_at: 0, finished_at: 0 }),
    'GET /api/channel/7': () => ok(pool),
    'POST /api/channel/': (call: FakeCall) => ok([{ ...pool, name: (call.body as { name: string }).name }]),
    'PUT /api/channel/': (call: FakeCall) => ok({ ...pool, ...(call.body as object) }),
    'POST /api/channel/multi_key/manage': (call: FakeCall) =>
      (call.body as { action: string }).action === 'get_key_status' ? ok(keyPage) : ok(undefined),
  });
}

const manageCalls = (server: ReturnType<typeof serve>) =>
  server
    .callsTo('POST', '/api/channel/multi_key/manage')
    .map((c) => c.body as Record<string, unknown>)
    .filter((b) => b.action !== 'get_key_status');

describe('multi-key channels in the console', () => {
  beforeEach(() =>
    setSessionUser({ id: 1, username: 'root', display_name: 'Root', role: 100, status: 1, group: 'default' }),
  );
  afterEach(() => vi.unstubAllGlobals());

  it('creates one channel holding every key, picked in turn, when asked to', async () => {
    const server = serve();
    const user = userEvent.setup();
    await renderScreen(() => <ChannelsPage />);
    await screen.findByText('pool');
    await user.click(screen.getAllByRole('button', { name: 'Add channel' })[0] as HTMLElement);
    const sheet = within(await screen.findByTestId('channel-sheet'));
    await user.type(sheet.getByLabelText('Name'), 'pool');
    await user.type(sheet.getByLabelText('Key'), 'sk-1{Enter}sk-2');
    expect(sheet.getByText('2 keys: one channel is created for each')).toBeTruthy();
    await user.selectOptions(sheet.getByLabelText('Several keys'), 'One channel holding every key');
    expect(sheet.queryByText('2 keys: one channel is created for each')).toBeNull();
    await user.selectOptions(sheet.getByLabelText('Key selection'), 'In turn (round-robin)');
    await user.click(sheet.getByRole('button', { name: 'Submit' }));
    await waitFor(() => expect(server.callsTo('POST', '/api/channel/')).toHaveLength(1));
    expect(server.callsTo('POST', '/api/channel/')[0]?.body).toMatchObject({
      name: 'pool',
      key: 'sk-1\nsk-2',
      mode: 'multi_to_single',
      multi_key_mode: 'polling',
    });
  });

  it('lists the keys masked with their state, and enables, disables and deletes them, asking before bulk actions', async () => {
    const server = serve();
    const user = userEvent.setup();
    await renderScreen(() => <ChannelsPage />);
    // The list says the channel holds several keys.
    expect(within(await screen.findByTestId('channel-7')).getByText('3 keys')).toBeTruthy();
    await user.click(await screen.findByRole('button', { name: 'Edit pool' }));
    const panel = within(await screen.findByTestId('channel-keys'));
    expect(await panel.findByText('sk-pr…aaaa')).toBeTruthy();
    expect(panel.getByText('3 keys, 2 enabled, 1 disabled')).toBeTruthy();
    expect(panel.getByText('upstream answered 401 Unauthorized')).toBeTruthy();
    expect(panel.getByText('Auto-disabled')).toBeTruthy();

    await user.click(panel.getByRole('button', { name: 'Enable key 2' }));
    await waitFor(() =>
      expect(manageCalls(server)).toEqual([{ channel_id: 7, action: 'enable_key', key_index: 1 }]),
    );
    await user.click(panel.getByRole('button', { name: 'Disable key 3' }));
    await waitFor(() => expect(manageCalls(server)).toHaveLength(2));
    expect(manageCalls(server)[1]).toEqual({ channel_id: 7, action: 'disable_key', key_index: 2 });

    // Bulk actions and deletes wait for a confirmation; cancelling sends nothing.
    await user.click(panel.getByRole('button', { name: 'Delete disabled keys' }));
    const ask = await screen.findByRole('dialog', { name: 'Delete every disabled key of this channel?' });
    await user.click(within(ask).getByRole('button', { name: 'Cancel' }));
    expect(manageCalls(server)).toHaveLength(2);
    await user.click(panel.getByRole('button', { name: 'Delete key 1' }));
    await user.click(
      within(await screen.findByRole('dialog', { name: 'Delete key 1?' })).getByRole('button', {
        name: 'Confirm',
      }),
    );
    await waitFor(() => expect(manageCalls(server)).toHaveLength(3));
    expect(manageCalls(server)[2]).toEqual({ channel_id: 7, action: 'delete_key', key_index: 0 });
    // No call carries or answers a key.
    for (const call of server.callsTo('POST', '/api/channel/multi_key/manage'))
      expect(JSON.stringify(call.body)).not.toMatch(/sk-1/);
  });

  it('adds keys to a multi-key channel without retyping the others, and reads in Chinese', async () => {
    const server = serve();
    const user = userEvent.setup();
    await renderScreen(() => <ChannelsPage />);
    await user.click(await screen.findByRole('button', { name: 'Edit pool' }));
    const sheet = within(await screen.findByTestId('channel-sheet'));
    await user.type(sheet.getByLabelText('Key'), 'sk-new');
    expect((sheet.getByLabelText('Keys entered above') as HTMLSelectElement).value).toBe('append');
    expect(await sheet.findByText('sk-pr…cccc')).toBeTruthy();
    await i18next.changeLanguage('zh');
    try {
      expect(await screen.findByText('共 3 个密钥，2 个启用，1 个禁用')).toBeTruthy();
      expect(screen.getByText('自动禁用')).toBeTruthy();
    } finally {
      await i18next.changeLanguage('en');
    }
    await user.click(sheet.getByRole('button', { name: 'Submit' }));
    await waitFor(() => expect(server.callsTo('PUT', '/api/channel/')).toHaveLength(1));
    expect(server.callsTo('PUT', '/api/channel/')[0]?.body).toMatchObject({
      id: 7,
      key: 'sk-new',
      key_mode: 'append',
      multi_key_mode: 'polling',
    });
  });
});
