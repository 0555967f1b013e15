import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { setSessionUser } from '../../../lib/session.ts';
import { fakeServer, makeStatus, renderScreen } from '../../../testing/render.tsx';
import type { TokenRow } from '../api/tokens.ts';
import { batchNames, NEVER_EXPIRES, parseExpiry, parseTokenForm, type TokenForm } from '../validation.ts';
import { TokensPage } from './tokens-page.tsx';

const base: Omit<TokenRow, 'id' | 'name' | 'key' | 'status'> = {
  user_id: 1,
  created_time: 1_700_000_000,
  accessed_time: 0,
  expired_time: NEVER_EXPIRES,
  remain_quota: 500000,
  unlimited_quota: false,
  model_limits_enabled: false,
  model_limits: '',
  allow_ips: '',
  used_quota: 0,
  group: '',
  rpm_limit: 0,
  tpm_limit: 0,
  concurrency_limit: 0,
};
const tokens: TokenRow[] = [
  { ...base, id: 1, name: 'laptop', key: 'sk-aaa111', status: 1 },
  { ...base, id: 2, name: 'server', key: 'sk-bbb222', status: 2 },
  {
    ...base,
    id: 3,
    name: 'ci',
    key: 'sk-ccc333',
    status: 1,
    model_limits_enabled: true,
    model_limits: 'gpt-4o',
    rpm_limit: 30,
  },
];

function serve(items: TokenRow[] = tokens, status = makeStatus()) {
  return fakeServer({
    'GET /api/status': () => ({ body: { success: true, data: status } }),
    'GET /api/token/': () => ({
      body: { success: true, data: { items, total: items.length, page: 1, page_size: 10 } },
    }),
    'GET /api/token/search': () => ({
      body: { success: true, data: { items: [tokens[1]], total: 1, page: 1, page_size: 10 } },
    }),
    'GET /api/token/3': () => ({ body: { success: true, data: tokens[2] } }),
    'GET /api/user/models': () => ({ body: { success: true, data: ['gpt-4o', 'gpt-4o-mini'] } }),
    'GET /api/user/self/groups': () => ({
      body: {
        success: true,
        data: { default: { desc: 'Default', ratio: 1 }, vip: { desc: 'VIP', ratio: 2 } },
      },
    }),
    'POST /api/token/': (call) => ({
      body: { success: true, data: { ...tokens[0], ...(call.body as object) } },
    }),
    'PUT /api/token/': (call) => ({
      body: { success: true, data: { ...tokens[0], ...(call.body as object) } },
    }),
    'DELETE /api/token/1/': () => ({ body: { success: true } }),
  });
}

const row = (name: string) => within(screen.getByText(name).closest('tr') as HTMLElement);
const form = (overrides: Partial<TokenForm> = {}): TokenForm => ({
  name: 'n',
  remainQuota: '500000',
  unlimitedQuota: false,
  expiry: '',
  count: '1',
  modelLimitsEnabled: false,
  modelLimits: [],
  allowIps: '',
  group: '',
  limits: { rpm: '', tpm: '', concurrency: '' },
  ...overrides,
});

describe('token rules', () => {
  it('names a batch with a dash and a 6-character alphanumeric suffix after the first', () => {
    const names = batchNames('app', 3);
    expect(names[0]).toBe('app');
    for (const name of names.slice(1)) expect(name).toMatch(/^app-[A-Za-z0-9]{6}$/);
    expect(new Set(names).size).toBe(3);
  });

  it('checks name, expiry, quota and count', () => {
    expect(parseTokenForm(form({ name: '  ' }), false)).toMatchObject({ ok: false, error: 'nameRequired' });
    // a blank name is fine when editing (the server keeps it)
    expect(parseTokenForm(form({ name: '' }), true).ok).toBe(true);
    expect(parseTokenForm(form({ expiry: 'next tuesday' }), false)).toMatchObject({
      ok: false,
      error: 'expiryFormat',
    });
    expect(parseTokenForm(form({ remainQuota: 'lots' }), false)).toMatchObject({
      ok: false,
      error: 'quotaInteger',
    });
    for (const count of ['0', '-1', '1.5', 'x'])
      expect(parseTokenForm(form({ count }), false)).toMatchObject({ ok: false, error: 'countPositive' });
    const ok = parseTokenForm(form({ remainQuota: '1234.9', count: '3', modelLimits: ['a', 'b'] }), false);
    expect(ok).toMatchObject({
      ok: true,
      value: { count: 3, fields: { remain_quota: 1234, model_limits: 'a,b' } },
    });
    expect(parseExpiry('')).toBe(NEVER_EXPIRES);
    expect(parseExpiry('2030-01-02 03:04:05')).toBe(
      Math.floor(new Date(2030, 0, 2, 3, 4, 5).getTime() / 1000),
    );
  });
});

describe('tokens page', () => {
  beforeEach(() =>
    setSessionUser({ id: 1, username: 'alice', display_name: 'Alice', role: 1, status: 1, group: 'default' }),
  );
  afterEach(() => vi.unstubAllGlobals());

  it('shows the own-use warning, the tokens and their statuses', async () => {
    serve();
    await renderScreen(() => <TokensPage />);
    expect(screen.getByRole('note').textContent).toMatch(/own use only/i);
    expect(await screen.findByText('laptop')).toBeTruthy();
    expect(row('laptop').getByText('Enabled')).toBeTruthy();
    expect(row('server').getByText('Disabled')).toBeTruthy();
    expect(row('ci').getByText('Enabled (limited models)')).toBeTruthy();
    // only enabled tokens offer Disable
    expect(row('server').getByRole('button', { name: 'Enable server' })).toBeTruthy();
    expect(row('laptop').getByRole('button', { name: 'Disable laptop' })).toBeTruthy();
  });

  it('says what to do when there are no tokens', async () => {
    serve([]);
    await renderScreen(() => <TokensPage />);
    expect(await screen.findByText('No tokens yet')).toBeTruthy();
  });

  it('searches by name and key', async () => {
    const server = serve();
    const user = userEvent.setup();
    await renderScreen(() => <TokensPage />);
    await screen.findByText('laptop');
    await user.type(screen.getByLabelText('Search by token name'), 'serv');
    await user.type(screen.getByLabelText('Search by key'), 'sk-bbb');
    await user.click(screen.getByRole('button', { name: 'Search' }));
    await waitFor(() => expect(server.callsTo('GET', '/api/token/search')).toHaveLength(1));
    const url = new URL(server.callsTo('GET', '/api/token/search')[0]?.url ?? '', 'http://x');
    expect(url.searchParams.get('keyword')).toBe('serv');
    expect(url.searchParams.get('token')).toBe('sk-bbb');
    await waitFor(() => expect(screen.queryByText('laptop')).toBeNull());
  });

  it('opens with the name search of a link, and keeps the searched key out of the address', async () => {
    const server = serve();
    const user = userEvent.setup();
    const { router } = await renderScreen(() => <TokensPage />, { search: '?keyword=serv' });
    await screen.findByText('server');
    expect((screen.getByLabelText('Search by token name') as HTMLInputElement).value).toBe('serv');
    const url = new URL(server.callsTo('GET', '/api/token/search')[0]?.url ?? '', 'http://x');
    expect(url.searchParams.get('keyword')).toBe('serv');
    await user.type(screen.getByLabelText('Search by key'), 'sk-bbb');
    await user.click(screen.getByRole('button', { name: 'Search' }));
    await waitFor(() => expect(server.callsTo('GET', '/api/token/search')).toHaveLength(2));
    expect(server.callsTo('GET', '/api/token/search')[1]?.url).toContain('token=sk-bbb');
    expect(JSON.stringify(router.state.location.search)).not.toContain('sk-bbb');
  });

  it('copies one key, and refuses to copy an empty selection', async () => {
    serve();
    const user = userEvent.setup();
    await renderScreen(() => <TokensPage />);
    await screen.findByText('laptop');
    await user.click(row('laptop').getByRole('button', { name: 'Copy laptop' }));
    expect(await navigator.clipboard.readText()).toBe('sk-aaa111');
    await user.click(screen.getByRole('button', { name: 'Copy selected' }));
    expect(await screen.findByText('Select at least one token!')).toBeTruthy();
    await user.click(screen.getByLabelText('Select laptop'));
    await user.click(screen.getByLabelText('Select ci'));
    await user.click(screen.getByRole('button', { name: 'Copy selected' }));
    await waitFor(async () =>
      expect(await navigator.clipboard.readText()).toBe('laptop    sk-aaa111\nci    sk-ccc333'),
    );
  });

  it('shows a copy-by-hand dialog when the clipboard refuses', async () => {
    serve();
    const user = userEvent.setup();
    await renderScreen(() => <TokensPage />);
    await screen.findByText('laptop');
    vi.spyOn(navigator.clipboard, 'writeText').mockRejectedValueOnce(new Error('denied'));
    await user.click(row('laptop').getByRole('button', { name: 'Copy laptop' }));
    const dialog = await screen.findByRole('dialog');
    expect(dialog.textContent).toContain('Unable to copy to clipboard, please copy manually');
    expect(dialog.textContent).toContain('sk-aaa111');
  });

  it('blocks a create without a name and with a bad expiry, and sends nothing', async () => {
    const server = serve();
    const user = userEvent.setup();
    await renderScreen(() => <TokensPage />);
    await screen.findByText('laptop');
    await user.click(screen.getByRole('button', { name: 'Add token' }));
    const sheet = await screen.findByRole('dialog');
    await user.click(within(sheet).getByRole('button', { name: 'Submit' }));
    expect(await within(sheet).findByText('Please enter a token name')).toBeTruthy();
    await user.type(within(sheet).getByLabelText('Name'), 'x');
    await user.type(within(sheet).getByLabelText('Expiry time'), 'soon');
    await user.click(within(sheet).getByRole('button', { name: 'Submit' }));
    expect(await within(sheet).findByText('Expiry time format error!')).toBeTruthy();
    expect(server.callsTo('POST', '/api/token/')).toHaveLength(0);
  });

  it('creates a batch with presets: the extra tokens get random suffixes', async () => {
    const server = serve();
    const user = userEvent.setup();
    await renderScreen(() => <TokensPage />);
    await screen.findByText('laptop');
    await user.click(screen.getByRole('button', { name: 'Add token' }));
    const sheet = await screen.findByRole('dialog');
    await user.type(within(sheet).getByLabelText('Name'), 'bot');
    await user.click(within(sheet).getByRole('button', { name: '$10.00' }));
    await user.click(within(sheet).getByRole('button', { name: '1 day' }));
    await user.clear(within(sheet).getByLabelText('Number to create'));
    await user.type(within(sheet).getByLabelText('Number to create'), '3');
    await user.click(within(sheet).getByRole('switch', { name: 'Limit to selected models' }));
    await user.click(await within(sheet).findByLabelText('gpt-4o-mini'));
    await user.type(within(sheet).getByLabelText('IP allow-list'), '10.0.0.0/8');
    await user.selectOptions(within(sheet).getByLabelText('Group'), 'vip');
    const before = Math.floor(Date.now() / 1000);
    await user.click(within(sheet).getByRole('button', { name: 'Submit' }));
    await waitFor(() => expect(server.callsTo('POST', '/api/token/')).toHaveLength(3));
    const bodies = server.callsTo('POST', '/api/token/').map((c) => c.body as Record<string, unknown>);
    expect(bodies[0]).toMatchObject({
      name: 'bot',
      remain_quota: 5_000_000,
      unlimited_quota: false,
      model_limits_enabled: true,
      model_limits: 'gpt-4o-mini',
      allow_ips: '10.0.0.0/8',
      group: 'vip',
    });
    // one day from now, to the second the field shows
    expect(Math.abs((bodies[0]?.expired_time as number) - (before + 86_400))).toBeLessThanOrEqual(2);
    expect(bodies[1]?.name).toMatch(/^bot-[A-Za-z0-9]{6}$/);
    expect(bodies[2]?.name).toMatch(/^bot-[A-Za-z0-9]{6}$/);
    expect(await screen.findByText('3 tokens created')).toBeTruthy();
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
  });

  it('refuses a batch whose name leaves no room for the random suffix', async () => {
    const server = serve();
    const user = userEvent.setup();
    await renderScreen(() => <TokensPage />);
    await screen.findByText('laptop');
    await user.click(screen.getByRole('button', { name: 'Add token' }));
    const sheet = within(await screen.findByRole('dialog'));
    await user.type(sheet.getByLabelText('Name'), 'a-very-long-token-name-24');
    await user.click(sheet.getByRole('button', { name: '10' }));
    await user.click(sheet.getByRole('button', { name: 'Submit' }));
    expect(await sheet.findByText(/at most 23 characters/)).toBeTruthy();
    expect(server.callsTo('POST', '/api/token/')).toHaveLength(0);
    // one token of that name is fine
    await user.clear(sheet.getByLabelText('Number to create'));
    await user.type(sheet.getByLabelText('Number to create'), '1');
    await user.click(sheet.getByRole('button', { name: 'Submit' }));
    await waitFor(() => expect(server.callsTo('POST', '/api/token/')).toHaveLength(1));
  });

  it('offers the chat links of the Chats option per token, filled with that token', async () => {
    serve(
      tokens,
      makeStatus({
        server_address: 'https://gw.example',
        chats: [
          { NextChat: 'https://next.example/#/?key={key}&url={address}' },
          { Lobe: 'https://lobe.example/?k={key}' },
        ],
      }),
    );
    const user = userEvent.setup();
    await renderScreen(() => <TokensPage />);
    await screen.findByText('laptop');
    await user.click(row('laptop').getByRole('button', { name: 'Open a chat with laptop' }));
    const next = await screen.findByRole('menuitem', { name: 'NextChat' });
    expect(next.getAttribute('href')).toBe(
      'https://next.example/#/?key=sk-aaa111&url=https%3A%2F%2Fgw.example',
    );
    expect(next.getAttribute('target')).toBe('_blank');
    expect(next.getAttribute('rel')).toContain('noopener');
    expect(screen.getByRole('menuitem', { name: 'Lobe' }).getAttribute('href')).toBe(
      'https://lobe.example/?k=sk-aaa111',
    );
  });

  it('says whom to ask when no chat links are configured, and when the configuration is broken', async () => {
    serve(tokens, makeStatus({ chats: [] }));
    const user = userEvent.setup();
    const first = await renderScreen(() => <TokensPage />);
    await screen.findByText('laptop');
    await user.click(row('laptop').getByRole('button', { name: 'Open a chat with laptop' }));
    expect(await screen.findByText('Please contact the administrator to configure chat links')).toBeTruthy();
    first.unmount();

    // a Chats value that is not a list
    serve(tokens, makeStatus({ chats: { NextChat: 'https://next.example' } as never }));
    await renderScreen(() => <TokensPage />);
    await screen.findByText('laptop');
    await user.click(row('laptop').getByRole('button', { name: 'Open a chat with laptop' }));
    expect(await screen.findByText('Chat link configuration error, contact the administrator')).toBeTruthy();
  });

  it('sends the limits typed, and refuses one that is not a whole number without sending', async () => {
    const server = serve();
    const user = userEvent.setup();
    await renderScreen(() => <TokensPage />);
    await screen.findByText('laptop');
    await user.click(screen.getByRole('button', { name: 'Add token' }));
    const sheet = await screen.findByRole('dialog');
    await user.type(within(sheet).getByLabelText('Name'), 'agent');
    await user.type(within(sheet).getByLabelText('Tokens per minute'), '-5');
    await user.click(within(sheet).getByRole('button', { name: 'Submit' }));
    expect(await within(sheet).findByText('A limit must be a whole number of 0 or more')).toBeTruthy();
    expect(server.callsTo('POST', '/api/token/')).toHaveLength(0);
    await user.clear(within(sheet).getByLabelText('Tokens per minute'));
    await user.type(within(sheet).getByLabelText('Tokens per minute'), '200000');
    await user.type(within(sheet).getByLabelText('Requests at a time'), '4');
    await user.click(within(sheet).getByRole('button', { name: 'Submit' }));
    await waitFor(() => expect(server.callsTo('POST', '/api/token/')).toHaveLength(1));
    expect(server.callsTo('POST', '/api/token/')[0]?.body).toMatchObject({
      name: 'agent',
      rpm_limit: 0,
      tpm_limit: 200000,
      concurrency_limit: 4,
    });
  });

  it('edits a token with its current values', async () => {
    const server = serve();
    const user = userEvent.setup();
    await renderScreen(() => <TokensPage />);
    await screen.findByText('laptop');
    await user.click(row('ci').getByRole('button', { name: 'Edit ci' }));
    const sheet = await screen.findByRole('dialog');
    await waitFor(() => expect((within(sheet).getByLabelText('Name') as HTMLInputElement).value).toBe('ci'));
    expect(within(sheet).queryByLabelText('Number to create')).toBeNull();
    expect((within(sheet).getByLabelText('gpt-4o') as HTMLInputElement).checked).toBe(true);
    expect((within(sheet).getByLabelText('Requests per minute') as HTMLInputElement).value).toBe('30');
    await user.click(within(sheet).getByRole('switch', { name: 'Unlimited quota' }));
    await user.click(within(sheet).getByRole('button', { name: 'Submit' }));
    await waitFor(() => expect(server.callsTo('PUT', '/api/token/')).toHaveLength(1));
    expect(server.callsTo('PUT', '/api/token/')[0]?.body).toMatchObject({
      id: 3,
      name: 'ci',
      unlimited_quota: true,
      expired_time: NEVER_EXPIRES,
      model_limits: 'gpt-4o',
      rpm_limit: 30,
      tpm_limit: 0,
    });
    expect(await screen.findByText('Token updated')).toBeTruthy();
  });

  it('enables and disables with a status-only update', async () => {
    const server = serve();
    const user = userEvent.setup();
    await renderScreen(() => <TokensPage />);
    await screen.findByText('laptop');
    await user.click(row('server').getByRole('button', { name: 'Enable server' }));
    await waitFor(() => expect(server.callsTo('PUT', '/api/token/')).toHaveLength(1));
    const call = server.callsTo('PUT', '/api/token/')[0];
    expect(call?.url).toContain('status_only=true');
    expect(call?.body).toEqual({ id: 2, status: 1 });
    expect(await screen.findByText('Token enabled')).toBeTruthy();
  });

  it('deletes only after confirmation', async () => {
    const server = serve();
    const user = userEvent.setup();
    await renderScreen(() => <TokensPage />);
    await screen.findByText('laptop');
    await user.click(row('laptop').getByRole('button', { name: 'Delete laptop' }));
    const dialog = await screen.findByRole('dialog');
    await user.click(within(dialog).getByRole('button', { name: 'Cancel' }));
    expect(server.callsTo('DELETE', '/api/token/1/')).toHaveLength(0);
    await user.click(row('laptop').getByRole('button', { name: 'Delete laptop' }));
    await user.click(within(await screen.findByRole('dialog')).getByRole('button', { name: 'Confirm' }));
    await waitFor(() => expect(server.callsTo('DELETE', '/api/token/1/')).toHaveLength(1));
    expect(await screen.findByText('Token deleted')).toBeTruthy();
  });
});
