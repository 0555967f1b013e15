/**
 * Budget windows on the tokens page: set in the token form (the window editor), shown in the list. Quota is
 * 500,000 units per dollar (the QuotaPerUnit default the status answers), so $5 is 2,500,000 units.
 */
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { setSessionUser } from '../../../lib/session.ts';
import type { SiteStatus } from '../../../lib/status.ts';
import { fakeServer, makeStatus, renderScreen } from '../../../testing/render.tsx';
import type { TokenRow } from '../../tokens/api/tokens.ts';
import { TokensPage } from '../../tokens/components/tokens-page.tsx';
import { nextMidnight } from '../testing/clock.ts';

/** A flow through a whole screen: slower than one check when the machine is busy. */
const SLOW = { timeout: 20_000 };

const token = (overrides: Partial<TokenRow>): TokenRow => ({
  id: 7,
  user_id: 1,
  key: 'sk-agent',
  status: 1,
  name: 'agent',
  created_time: 1_700_000_000,
  accessed_time: 0,
  expired_time: -1,
  remain_quota: 0,
  unlimited_quota: true,
  model_limits_enabled: false,
  model_limits: '',
  allow_ips: '',
  used_quota: 0,
  group: '',
  rpm_limit: 0,
  tpm_limit: 0,
  concurrency_limit: 0,
  ...overrides,
});

function serve(rows: TokenRow[], status: Partial<SiteStatus> = {}) {
  return fakeServer({
    'GET /api/status': () => ({ body: { success: true, data: makeStatus(status) } }),
    'GET /api/token/': () => ({
      body: { success: true, data: { items: rows, total: rows.length, page: 1, page_size: 10 } },
    }),
    ...Object.fromEntries(
      rows.map((row) => [`GET /api/token/${row.id}`, () => ({ body: { success: true, data: row } })]),
    ),
    'GET /api/user/models': () => ({ body: { success: true, data: [] } }),
    'GET /api/user/self/groups': () => ({ body: { success: true, data: {} } }),
    'POST /api/token/': (call) => ({ body: { success: true, data: token(call.body as Partial<TokenRow>) } }),
    'PUT /api/token/': (call) => ({ body: { success: true, data: token(call.body as Partial<TokenRow>) } }),
  });
}

const windowRow = (sheet: ReturnType<typeof within>, n: number) =>
  within(sheet.getByRole('group', { name: `Window ${n}` }));

describe('budget windows of tokens', () => {
  beforeEach(() =>
    setSessionUser({ id: 1, username: 'alice', display_name: 'Alice', role: 1, status: 1, group: 'default' }),
  );
  afterEach(() => vi.unstubAllGlobals());

  it('creates a token with $5 a day and 200 requests in any 5 hours', SLOW, async () => {
    const server = serve([]);
    const user = userEvent.setup({ delay: null });
    await renderScreen(() => <TokensPage />);
    await user.click(await screen.findByRole('button', { name: 'Add token' }));
    const sheet = within(await screen.findByRole('dialog'));
    await user.type(sheet.getByLabelText('Name'), 'agent');
    expect(sheet.getByText('No budget windows: only the balance limits spending.')).toBeTruthy();
    await user.click(sheet.getByRole('button', { name: 'Add window' }));
    const first = windowRow(sheet, 1);
    await user.clear(first.getByLabelText('Limit ($)'));
    await user.type(first.getByLabelText('Limit ($)'), '5');
    await user.click(sheet.getByRole('button', { name: 'Add window' }));
    const second = windowRow(sheet, 2);
    await user.selectOptions(second.getByLabelText('Counts'), 'requests');
    await user.selectOptions(second.getByLabelText('Period'), 'rolling');
    await user.clear(second.getByLabelText('Hours'));
    await user.type(second.getByLabelText('Hours'), '5');
    await user.clear(second.getByLabelText('Limit (requests)'));
    await user.type(second.getByLabelText('Limit (requests)'), '200');
    await user.click(sheet.getByRole('button', { name: 'Submit' }));
    await waitFor(() => expect(server.callsTo('POST', '/api/token/')).toHaveLength(1));
    expect(server.callsTo('POST', '/api/token/')[0]?.body).toHaveProperty('quota_windows', [
      { unit: 'quota', limit: 2_500_000, period: 'day' },
      { unit: 'requests', limit: 200, period: 'rolling', hours: 5 },
    ]);
  });

  it('takes a limit in quota units when the site shows quota, not money', SLOW, async () => {
    const server = serve([], { display_in_currency: false });
    const user = userEvent.setup({ delay: null });
    await renderScreen(() => <TokensPage />);
    await user.click(await screen.findByRole('button', { name: 'Add token' }));
    const sheet = within(await screen.findByRole('dialog'));
    await user.type(sheet.getByLabelText('Name'), 'units');
    await user.click(sheet.getByRole('button', { name: 'Add window' }));
    const first = windowRow(sheet, 1);
    await user.selectOptions(first.getByLabelText('Period'), 'month');
    await user.clear(first.getByLabelText('Limit (quota)'));
    await user.type(first.getByLabelText('Limit (quota)'), '1000000');
    await user.click(sheet.getByRole('button', { name: 'Submit' }));
    await waitFor(() => expect(server.callsTo('POST', '/api/token/')).toHaveLength(1));
    expect(server.callsTo('POST', '/api/token/')[0]?.body).toHaveProperty('quota_windows', [
      { unit: 'quota', limit: 1_000_000, period: 'month' },
    ]);
  });

  it('marks a wrong window and sends nothing', SLOW, async () => {
    const server = serve([]);
    const user = userEvent.setup({ delay: null });
    await renderScreen(() => <TokensPage />);
    await user.click(await screen.findByRole('button', { name: 'Add token' }));
    const sheet = within(await screen.findByRole('dialog'));
    await user.type(sheet.getByLabelText('Name'), 'bad');
    await user.click(sheet.getByRole('button', { name: 'Add window' }));
    const first = windowRow(sheet, 1);
    await user.clear(first.getByLabelText('Limit ($)'));
    await user.type(first.getByLabelText('Limit ($)'), '0');
    await user.click(sheet.getByRole('button', { name: 'Submit' }));
    expect(
      within(first.getByLabelText('Limit ($)').parentElement as HTMLElement).getByRole('alert').textContent,
    ).toBe('The limit must be more than 0');
    await user.type(first.getByLabelText('Limit ($)'), '.5');
    await user.selectOptions(first.getByLabelText('Period'), 'rolling');
    await user.clear(first.getByLabelText('Hours'));
    await user.type(first.getByLabelText('Hours'), '745');
    await user.click(sheet.getByRole('button', { name: 'Submit' }));
    expect(await first.findByText('Hours must be a whole number from 1 to 744')).toBeTruthy();
    await user.clear(first.getByLabelText('Hours'));
    await user.type(first.getByLabelText('Hours'), '24');
    await user.click(sheet.getByRole('button', { name: 'Add window' }));
    const second = windowRow(sheet, 2);
    await user.selectOptions(second.getByLabelText('Period'), 'rolling');
    await user.clear(second.getByLabelText('Hours'));
    await user.type(second.getByLabelText('Hours'), '24');
    await user.click(sheet.getByRole('button', { name: 'Submit' }));
    expect(await second.findByText('Two windows count the same thing over the same period')).toBeTruthy();
    expect(server.callsTo('POST', '/api/token/')).toHaveLength(0);
  });

  it(
    'shows what each window of a token has spent, and asks before removing one that has spent',
    SLOW,
    async () => {
      const reset = nextMidnight();
      const agent = token({
        quota_windows: [
          { unit: 'quota', limit: 2_500_000, period: 'day' },
          // $2.469134: shown to the unit, not rounded to cents
          { unit: 'quota', limit: 1_234_567, period: 'week' },
          { unit: 'requests', limit: 50, period: 'month' },
        ],
        quota_window_states: [
          { unit: 'quota', period: 'day', limit: 2_500_000, used: 600_000, left: 1_900_000, reset_at: reset },
          {
            unit: 'quota',
            period: 'week',
            limit: 1_234_567,
            used: 0,
            left: 1_234_567,
            reset_at: 4_102_444_800,
          },
          { unit: 'requests', period: 'month', limit: 50, used: 0, left: 50, reset_at: 4_102_444_800 },
        ],
      });
      const server = serve([agent]);
      const user = userEvent.setup({ delay: null });
      await renderScreen(() => <TokensPage />);
      // The list: one line per window.
      const cell = within((await screen.findByText('agent')).closest('tr') as HTMLElement);
      expect(cell.getByText('$1.20 of $5.00 today, resets 00:00')).toBeTruthy();
      expect(
        cell.getByText(/^0 of 50 requests this month, resets \d{4}-\d{2}-\d{2} \d{2}:\d{2}$/),
      ).toBeTruthy();

      await user.click(cell.getByRole('button', { name: 'Edit agent' }));
      const sheet = within(await screen.findByRole('dialog'));
      const first = windowRow(sheet, 1);
      expect(first.getByText('Used $1.20 · $3.80 left · resets 00:00')).toBeTruthy();
      expect((first.getByLabelText('Limit ($)') as HTMLInputElement).value).toBe('5');
      expect((windowRow(sheet, 2).getByLabelText('Limit ($)') as HTMLInputElement).value).toBe('2.469134');

      // The month window has spent nothing: it goes without a question.
      await user.click(sheet.getByRole('button', { name: 'Remove window 3' }));
      expect(sheet.queryByRole('group', { name: 'Window 3' })).toBeNull();
      // The day window has spent $1.20: asked first; cancelling keeps it.
      await user.click(sheet.getByRole('button', { name: 'Remove window 1' }));
      const question = await screen.findByRole('dialog', { name: 'Remove this window?' });
      expect(question.textContent).toContain('It has counted $1.20 in its current period');
      await user.click(within(question).getByRole('button', { name: 'Cancel' }));
      await waitFor(() => expect(screen.queryByRole('dialog', { name: 'Remove this window?' })).toBeNull());
      expect(sheet.getByRole('group', { name: 'Window 1' })).toBeTruthy();
      await user.click(sheet.getByRole('button', { name: 'Submit' }));
      await waitFor(() => expect(server.callsTo('PUT', '/api/token/')).toHaveLength(1));
      expect(server.callsTo('PUT', '/api/token/')[0]?.body).toMatchObject({
        id: 7,
        quota_windows: [
          { unit: 'quota', limit: 2_500_000, period: 'day' },
          { unit: 'quota', limit: 1_234_567, period: 'week' },
        ],
      });
    },
  );

  it('removes a spent window once confirmed', SLOW, async () => {
    const agent = token({
      quota_windows: [{ unit: 'requests', limit: 100, period: 'day' }],
      quota_window_states: [
        { unit: 'requests', period: 'day', limit: 100, used: 100, left: 0, reset_at: nextMidnight() },
      ],
    });
    const server = serve([agent]);
    const user = userEvent.setup({ delay: null });
    await renderScreen(() => <TokensPage />);
    await user.click(await screen.findByRole('button', { name: 'Edit agent' }));
    const sheet = within(await screen.findByRole('dialog', { name: 'Edit token' }));
    expect(sheet.getByText('Used 100 · 0 left · resets 00:00')).toBeTruthy();
    await user.click(sheet.getByRole('button', { name: 'Remove window 1' }));
    const question = await screen.findByRole('dialog', { name: 'Remove this window?' });
    expect(question.textContent).toContain('It has counted 100 in its current period');
    await user.click(within(question).getByRole('button', { name: 'Remove' }));
    expect(await sheet.findByText('No budget windows: only the balance limits spending.')).toBeTruthy();
    await user.click(sheet.getByRole('button', { name: 'Submit' }));
    await waitFor(() => expect(server.callsTo('PUT', '/api/token/')).toHaveLength(1));
    expect(server.callsTo('PUT', '/api/token/')[0]?.body).toMatchObject({ id: 7, quota_windows: [] });
  });
});
