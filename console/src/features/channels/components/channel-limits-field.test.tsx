import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import i18next from 'i18next';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { setSessionUser } from '../../../lib/session.ts';
import { fakeServer, makeStatus, renderScreen } from '../../../testing/render.tsx';
import type { ChannelView } from '../api/channels.ts';
import { channelView } from '../testing/channel-view.ts';
import { channelLimitInput } from './channel-limits-field.tsx';
import { ChannelsPage } from './channels-page.tsx';

const limited: ChannelView = channelView({ id: 1, name: 'limited', tpm_limit: 400000, concurrency_limit: 8 });

function serve() {
  const ok = (data: unknown) => ({ body: { success: true, message: '', data } });
  return fakeServer({
    'GET /api/status': () => ok(makeStatus()),
    'GET /api/channel/': () => ok({ items: [limited], total: 1, page: 1, page_size: 10 }),
    'GET /api/group/': () => ok(['default']),
    'GET /api/channel/models_enabled': () => ok(['gpt-4o']),
    'GET /api/channel/test/progress': () =>
      ok({ running: false, done: 0, total: 0, failed: 0, started_at: 0, finished_at: 0 }),
    'GET /api/channel/1': () => ok(limited),
    'PUT /api/channel/': (call) => ok({ ...limited, ...(call.body as object) }),
  });
}

describe('channel limits', () => {
  beforeEach(() =>
    setSessionUser({ id: 1, username: 'root', display_name: 'Root', role: 100, status: 1, group: 'default' }),
  );
  afterEach(async () => {
    vi.unstubAllGlobals();
    await i18next.changeLanguage('en');
  });

  it('reads blank as no limit and refuses what is not a whole number of 0 or more', () => {
    expect(channelLimitInput({ rpm: '', tpm: ' 1000 ', concurrency: '0' })).toEqual({
      rpm_limit: 0,
      tpm_limit: 1000,
      concurrency_limit: 0,
    });
    for (const bad of ['-1', '1.5', 'ten', '2147483648'])
      expect(channelLimitInput({ rpm: bad, tpm: '', concurrency: '' })).toBeUndefined();
  });

  it('shows the stored limits in the drawer, says which field is wrong, and sends the edited ones', async () => {
    const server = serve();
    const user = userEvent.setup();
    await renderScreen(() => <ChannelsPage />);
    await user.click(await screen.findByRole('button', { name: /Edit limited/ }));
    const sheet = within(await screen.findByTestId('channel-sheet'));
    await waitFor(() =>
      expect((sheet.getByLabelText('Tokens per minute') as HTMLInputElement).value).toBe('400000'),
    );
    expect((sheet.getByLabelText('Requests at a time') as HTMLInputElement).value).toBe('8');
    expect((sheet.getByLabelText('Requests per minute') as HTMLInputElement).value).toBe('');
    await user.type(sheet.getByLabelText('Requests per minute'), '-3');
    expect(sheet.getAllByText('A limit must be a whole number of 0 or more!').length).toBeGreaterThan(0);
    await user.click(sheet.getByRole('button', { name: 'Submit' }));
    expect(server.callsTo('PUT', '/api/channel/')).toHaveLength(0);
    await user.clear(sheet.getByLabelText('Requests per minute'));
    await user.type(sheet.getByLabelText('Requests per minute'), '120');
    await user.clear(sheet.getByLabelText('Requests at a time'));
    await user.click(sheet.getByRole('button', { name: 'Submit' }));
    await waitFor(() => expect(server.callsTo('PUT', '/api/channel/')).toHaveLength(1));
    expect(server.callsTo('PUT', '/api/channel/')[0]?.body).toMatchObject({
      id: 1,
      rpm_limit: 120,
      tpm_limit: 400000,
      concurrency_limit: 0,
    });
  });

  it('names the fields in Chinese', async () => {
    await i18next.changeLanguage('zh');
    serve();
    const user = userEvent.setup();
    await renderScreen(() => <ChannelsPage />);
    await screen.findByText('limited');
    await user.click(screen.getAllByRole('button', { name: /编辑/ })[0] as HTMLElement);
    const sheet = within(await screen.findByTestId('channel-sheet'));
    expect(await sheet.findByLabelText('每分钟 Token 数')).toBeTruthy();
    expect(sheet.getByLabelText('同时请求数')).toBeTruthy();
  });
});
