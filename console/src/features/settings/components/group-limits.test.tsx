import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import i18next from 'i18next';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { setSessionUser } from '../../../lib/session.ts';
import { fakeServer, makeStatus, renderScreen } from '../../../testing/render.tsx';
import { groupLimitOptions, groupLimitRows } from '../group-limits.ts';
import { SettingsPage } from './settings-page.tsx';

const options: Record<string, string> = {
  ModelRequestRateLimitEnabled: 'false',
  ModelRequestRateLimitSuccessCount: '1000',
  ModelRequestRateLimitCount: '0',
  ModelRequestRateLimitDurationMinutes: '1',
  ModelRequestRateLimitGroup: '{}',
  GroupRatio: '{"default": 1, "vip": 0.5}',
  RateLimitUserDefault: '{"tpm": 100000}',
  RateLimitGroups: '{"svip": {"concurrency": 16}}',
  RateLimitModels: '{}',
};

function serve(refuse = false) {
  return fakeServer({
    'GET /api/option/': () => ({
      body: { success: true, data: Object.entries(options).map(([key, value]) => ({ key, value })) },
    }),
    'PUT /api/option/': () =>
      refuse
        ? { status: 400, body: { success: false, message: 'RateLimitGroups must be a JSON object' } }
        : { body: { success: true, message: '' } },
    'GET /api/status': () => ({ body: { success: true, data: makeStatus() } }),
  });
}

const open = async () => {
  await renderScreen(() => <SettingsPage tab="ratelimit" onTabChange={() => {}} />);
  return within(await screen.findByRole('region', { name: 'Tokens, requests and concurrency per user' }));
};

describe('group limits', () => {
  beforeEach(() =>
    setSessionUser({ id: 1, username: 'root', display_name: 'Root', role: 100, status: 1, group: 'default' }),
  );
  afterEach(async () => {
    vi.unstubAllGlobals();
    await i18next.changeLanguage('en');
  });

  it('has a row for every user and for each group the prices or the limits name', () => {
    const rows = groupLimitRows(options);
    expect(rows.map(([group]) => group)).toEqual(['', 'default', 'svip', 'vip']);
    expect(rows[0]?.[1]).toEqual({ rpm: '', tpm: '100000', concurrency: '' });
    expect(groupLimitOptions(rows)).toEqual({
      ok: true,
      userDefault: '{"tpm":100000}',
      groups: '{"svip":{"concurrency":16}}',
    });
    expect(groupLimitOptions([['vip', { rpm: '1.5', tpm: '', concurrency: '' }]])).toEqual({
      ok: false,
      group: 'vip',
      field: 'rpm',
    });
  });

  it("saves a group's limits and the default, leaving out groups without any", async () => {
    const server = serve();
    const user = userEvent.setup();
    const section = await open();
    const vip = within(section.getByTestId('group-limits-vip'));
    await user.type(vip.getByLabelText('Tokens per minute'), '500000');
    await user.type(vip.getByLabelText('Requests at a time'), '8');
    const every = within(section.getByTestId('group-limits-every-user'));
    await user.clear(every.getByLabelText('Tokens per minute'));
    await user.type(every.getByLabelText('Requests per minute'), '60');
    await user.click(section.getByRole('button', { name: 'Save user limits' }));
    await waitFor(() => expect(server.callsTo('PUT', '/api/option/')).toHaveLength(2));
    const sent = Object.fromEntries(
      server.callsTo('PUT', '/api/option/').map((c) => {
        const { key, value } = c.body as { key: string; value: string };
        return [key, JSON.parse(value)];
      }),
    );
    expect(sent).toEqual({
      RateLimitUserDefault: { rpm: 60 },
      RateLimitGroups: { svip: { concurrency: 16 }, vip: { tpm: 500000, concurrency: 8 } },
    });
  });

  it('marks a limit that is not a whole number and sends nothing; says when nothing changed', async () => {
    const server = serve();
    const user = userEvent.setup();
    const section = await open();
    await user.click(section.getByRole('button', { name: 'Save user limits' }));
    expect(await screen.findByText('You seem not to have changed anything')).toBeTruthy();
    const vip = within(section.getByTestId('group-limits-vip'));
    await user.type(vip.getByLabelText('Requests per minute'), '-1');
    await user.click(section.getByRole('button', { name: 'Save user limits' }));
    expect(vip.getByRole('alert').textContent).toBe('A limit must be a whole number of 0 or more');
    expect(server.callsTo('PUT', '/api/option/')).toHaveLength(0);
  });

  it('shows the server reason when it refuses, in Chinese for a Chinese console', async () => {
    await i18next.changeLanguage('zh');
    serve(true);
    const user = userEvent.setup();
    await renderScreen(() => <SettingsPage tab="ratelimit" onTabChange={() => {}} />);
    const section = within(await screen.findByRole('region', { name: '每个用户的 Token、请求与并发限制' }));
    await user.type(within(section.getByTestId('group-limits-vip')).getByLabelText('每分钟 Token 数'), '10');
    await user.click(section.getByRole('button', { name: '保存用户限制' }));
    expect(await screen.findByText(/RateLimitGroups must be a JSON object/)).toBeTruthy();
  });
});
