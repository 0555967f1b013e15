import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import i18next from 'i18next';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { setSessionUser } from '../../../lib/session.ts';
import { fakeServer, makeStatus, renderScreen } from '../../../testing/render.tsx';
import type { LogRow } from '../api/logs.ts';
import { firstTokenColor, LOG_COLUMNS_KEY, latencyColor } from '../rules.ts';
import { validateLogFilters } from '../validation.ts';
import { LogDetails } from './log-details.tsx';
import { LogsPage } from './logs-page.tsx';

const consume: LogRow = {
  id: 7,
  user_id: 2,
  created_at: 1_760_000_000,
  type: 2,
  content: 'model ratio 1.50, completion ratio 4.00, group ratio 1.00',
  username: 'alice',
  token_name: 'ci-token',
  token_id: 3,
  model_name: 'gpt-4o-mini',
  quota: 250000,
  prompt_tokens: 1200,
  completion_tokens: 340,
  use_time: 150,
  is_stream: true,
  group: 'vip',
  ip: '',
  request_id: 'req-1',
  other: JSON.stringify({
    model_ratio: 1.5,
    completion_ratio: 4,
    group_ratio: 1,
    cache_tokens: 100,
    cache_ratio: 0.5,
    frt: 4200,
    admin_info: { use_channel: ['3', '5'] },
  }),
  channel: 5,
  channel_name: 'openai-main',
};
const topup: LogRow = {
  ...consume,
  id: 8,
  type: 1,
  content: 'redeemed $10.00',
  model_name: '',
  other: '',
  use_time: 0,
  is_stream: false,
};

function serve() {
  return fakeServer({
    'GET /api/status': () => ({ body: { success: true, data: makeStatus() } }),
    'GET /api/log/': () => ({
      body: { success: true, data: { items: [consume, topup], total: 2, page: 1, page_size: 10 } },
    }),
    'GET /api/log/self/': () => ({
      body: { success: true, data: { items: [consume], total: 25, page: 1, page_size: 10 } },
    }),
    'GET /api/log/stat': () => ({ body: { success: true, data: { quota: 1000000, rpm: 12, tpm: 3456 } } }),
    'GET /api/log/self/stat': () => ({ body: { success: true, data: { quota: 500000, rpm: 3, tpm: 99 } } }),
    'GET /api/user/2': () => ({
      body: {
        success: true,
        data: { id: 2, username: 'alice', quota: 1500000, used_quota: 250000, request_count: 42 },
      },
    }),
  });
}

const admin = { id: 1, username: 'root', display_name: 'Root', role: 100, status: 1, group: 'default' };
const member = { id: 2, username: 'alice', display_name: 'Alice', role: 1, status: 1, group: 'default' };

describe('usage logs', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('colours use time and first-token time by the spec thresholds', () => {
    expect([latencyColor(100), latencyColor(101), latencyColor(299), latencyColor(300)]).toEqual([
      'green',
      'orange',
      'orange',
      'red',
    ]);
    expect([firstTokenColor(2.9), firstTokenColor(3), firstTokenColor(9.9), firstTokenColor(10)]).toEqual([
      'green',
      'orange',
      'orange',
      'red',
    ]);
  });

  it('rejects an end before the start and a non-numeric channel id', () => {
    expect(
      validateLogFilters({ start: '2026-01-02T00:00', end: '2026-01-01T00:00', channel: '' }, false),
    ).toEqual({ end: 'validation.endBeforeStart' });
    expect(validateLogFilters({ start: '', end: '', channel: 'abc' }, true)).toEqual({
      channel: 'validation.channelId',
    });
    // a user has no channel filter, so it is not checked
    expect(validateLogFilters({ start: '', end: '', channel: 'abc' }, false)).toEqual({});
  });

  it('shows a user their own logs and totals, without admin columns and filters', async () => {
    setSessionUser(member);
    const server = serve();
    await renderScreen(() => <LogsPage />);
    expect(await screen.findByText('gpt-4o-mini')).toBeTruthy();
    expect(await screen.findByText(/Quota consumed: \$1\.00/)).toBeTruthy();
    expect(screen.getByText('RPM: 3')).toBeTruthy();
    expect(screen.getByText('TPM: 99')).toBeTruthy();
    expect(screen.queryByLabelText('Username')).toBeNull();
    expect(screen.queryByLabelText('Channel ID')).toBeNull();
    expect(screen.queryByRole('columnheader', { name: 'Retry' })).toBeNull();
    expect(server.callsTo('GET', '/api/log/')).toHaveLength(0);
    // the default range: from the start of today to an hour from now
    const query = new URL(server.callsTo('GET', '/api/log/self/')[0]?.url ?? '', 'http://x').searchParams;
    const start = new Date();
    start.setHours(0, 0, 0, 0);
    expect(Number(query.get('start_timestamp'))).toBe(Math.floor(start.getTime() / 60000) * 60);
    expect(Number(query.get('end_timestamp'))).toBeGreaterThan(Date.now() / 1000 + 3000);
    // use time 150 s is orange; first token 4.2 s is orange
    expect(screen.getByText('150 s').className).toMatch(/orange/);
    expect(screen.getByText('first token 4.2 s').className).toMatch(/orange/);
  });

  it('sends the filters and goes back to page 1 on a new query', async () => {
    setSessionUser(member);
    const server = serve();
    const user = userEvent.setup();
    await renderScreen(() => <LogsPage />);
    await screen.findByText('gpt-4o-mini');
    await user.click(screen.getByRole('button', { name: 'Next' }));
    await waitFor(() =>
      expect(server.callsTo('GET', '/api/log/self/').some((c) => c.url.includes('p=2'))).toBe(true),
    );
    await user.type(screen.getByLabelText('Token name'), 'ci-token');
    await user.type(screen.getByLabelText('Model name'), 'gpt-4o');
    await user.type(screen.getByLabelText('Group'), 'vip');
    await user.selectOptions(screen.getByLabelText('Log type'), '2');
    await user.click(screen.getByRole('button', { name: 'Query' }));
    await waitFor(() => {
      const last = server.callsTo('GET', '/api/log/self/').at(-1)?.url ?? '';
      const q = new URL(last, 'http://x').searchParams;
      expect(q.get('token_name')).toBe('ci-token');
      expect(q.get('model_name')).toBe('gpt-4o');
      expect(q.get('group')).toBe('vip');
      expect(q.get('type')).toBe('2');
      expect(q.get('p')).toBe('1');
    });
    const stat = new URL(server.callsTo('GET', '/api/log/self/stat').at(-1)?.url ?? '', 'http://x');
    expect(stat.searchParams.get('token_name')).toBe('ci-token');
  });

  it('offers every log type the server writes, error rows included', async () => {
    setSessionUser(member);
    const server = serve();
    const user = userEvent.setup();
    await renderScreen(() => <LogsPage />);
    await screen.findByText('gpt-4o-mini');
    const options = [...(screen.getByLabelText('Log type') as HTMLSelectElement).options].map((o) => o.text);
    expect(options).toEqual(['All', 'Top-up', 'Consumption', 'Management', 'System', 'Error']);
    await user.selectOptions(screen.getByLabelText('Log type'), 'Error');
    await user.click(screen.getByRole('button', { name: 'Query' }));
    await waitFor(() => {
      const last = server.callsTo('GET', '/api/log/self/').at(-1)?.url ?? '';
      expect(new URL(last, 'http://x').searchParams.get('type')).toBe('5');
    });
  });

  it('opens with the filters of a shared link, range included, and keeps them on the next page', async () => {
    setSessionUser(member);
    const server = serve();
    const user = userEvent.setup();
    const { router } = await renderScreen(() => <LogsPage />, {
      search: '?model_name=gpt-4o&type=2&start=2024-01-02T03%3A04',
    });
    await screen.findByText('gpt-4o-mini');
    expect((screen.getByLabelText('Model name') as HTMLInputElement).value).toBe('gpt-4o');
    expect((screen.getByLabelText('Log type') as HTMLSelectElement).value).toBe('2');
    expect((screen.getByLabelText('Start time') as HTMLInputElement).value).toBe('2024-01-02T03:04');
    const first = new URL(server.callsTo('GET', '/api/log/self/')[0]?.url ?? '', 'http://x').searchParams;
    expect(first.get('model_name')).toBe('gpt-4o');
    expect(first.get('type')).toBe('2');
    expect(Number(first.get('start_timestamp'))).toBe(new Date('2024-01-02T03:04').getTime() / 1000);
    await user.click(screen.getByRole('button', { name: 'Next' }));
    await waitFor(() =>
      expect(router.state.location.search).toMatchObject({ model_name: 'gpt-4o', type: '2', page: 2 }),
    );
  });

  it('shows the validation message and does not query with an end before the start', async () => {
    setSessionUser(admin);
    const server = serve();
    const user = userEvent.setup();
    await renderScreen(() => <LogsPage />);
    await screen.findByText('gpt-4o-mini');
    const before = server.callsTo('GET', '/api/log/').length;
    await user.clear(screen.getByLabelText('End time'));
    await user.type(screen.getByLabelText('End time'), '2020-01-01T00:00');
    await user.type(screen.getByLabelText('Channel ID'), 'x1');
    await user.click(screen.getByRole('button', { name: 'Query' }));
    expect(await screen.findByText('The end time must not be before the start time')).toBeTruthy();
    expect(screen.getByText('The channel ID must be a whole number')).toBeTruthy();
    expect(server.callsTo('GET', '/api/log/')).toHaveLength(before);
  });

  it('gives admins the channel, user and retry columns, the admin filters and the expandable details', async () => {
    setSessionUser(admin);
    const server = serve();
    const user = userEvent.setup();
    await renderScreen(() => <LogsPage />);
    expect(await screen.findByText('openai-main')).toBeTruthy();
    expect(screen.getByText('3 → 5')).toBeTruthy();
    expect(screen.getByText('RPM: 12')).toBeTruthy();
    // the top-up row shows no model details
    const topupRow = screen.getByText('redeemed $10.00').closest('tr') as HTMLElement;
    expect(within(topupRow).queryByText('ci-token')).toBeNull();

    await user.type(screen.getByLabelText('Username'), 'alice');
    await user.type(screen.getByLabelText('Channel ID'), '5');
    await user.click(screen.getByRole('button', { name: 'Query' }));
    await waitFor(() => {
      const q = new URL(server.callsTo('GET', '/api/log/').at(-1)?.url ?? '', 'http://x').searchParams;
      expect(q.get('username')).toBe('alice');
      expect(q.get('channel')).toBe('5');
    });

    await user.click(screen.getByRole('button', { name: 'Show details of log 7' }));
    const d = within(screen.getByLabelText('Log details'));
    expect(d.getByText('Model ratio')).toBeTruthy();
    expect(d.getByText('1.5')).toBeTruthy();
    expect(d.getByText('Cached tokens')).toBeTruthy();
    expect(d.getByText('4.20 s')).toBeTruthy();
    expect(d.getByText('Channels tried')).toBeTruthy();
  });

  it('shows the 5-minute and 1-hour cache writes apart, each with its ratio', async () => {
    const other = {
      model_ratio: 1.5,
      completion_ratio: 5,
      group_ratio: 1,
      cache_tokens: 3000,
      cache_ratio: 0.1,
      cache_creation_tokens: 2000,
      cache_creation_ratio: 1.25,
      cache_creation_tokens_5m: 1200,
      cache_creation_ratio_5m: 1.25,
      cache_creation_tokens_1h: 800,
      cache_creation_ratio_1h: 2,
    };
    await renderScreen(() => <LogDetails log={{ ...consume, other: JSON.stringify(other) }} admin={false} />);
    const d = within(await screen.findByLabelText('Log details'));
    const value = (label: string) => d.getByText(label).nextElementSibling?.textContent;
    expect(value('5-minute cache creation tokens')).toBe('1200');
    expect(value('5-minute cache creation ratio')).toBe('1.25');
    expect(value('1-hour cache creation tokens')).toBe('800');
    expect(value('1-hour cache creation ratio')).toBe('2');
  });

  // Issue 39's calls, priced as Anthropic and OpenAI publish them: Claude Sonnet 4.5 above 200K prompt tokens at
  // $6 / $22.50 beside $3 / $15 (× 2, × 1.5) with three web searches at $10 per 1,000
  // (https://docs.anthropic.com/en/docs/about-claude/pricing): $0.03, 15,000 quota at 500,000 a dollar; GPT-5 at
  // the priority tier, twice its price (https://platform.openai.com/docs/pricing).
  const longCall = {
    model_ratio: 1.5,
    completion_ratio: 5,
    group_ratio: 1,
    long_context_above: 200000,
    long_context_input_ratio: 2,
    long_context_output_ratio: 1.5,
    long_context_cache_ratio: 2,
    web_search_calls: 3,
    web_search_price: 0.01,
    fees_quota: 15000,
  };
  const priorityCall = {
    model_ratio: 0.625,
    completion_ratio: 8,
    group_ratio: 1,
    service_tier: 'priority',
    service_tier_ratio: 2,
  };

  it('names the long-context tier, the service tier and the fees, each with its figures', async () => {
    await renderScreen(() => (
      <>
        <LogDetails log={{ ...consume, id: 1, other: JSON.stringify(longCall) }} admin={false} />
        <LogDetails log={{ ...consume, id: 2, other: JSON.stringify(priorityCall) }} admin={false} />
      </>
    ));
    const [long, priority] = (await screen.findAllByLabelText('Log details')).map((el) => within(el));
    const value = (d: ReturnType<typeof within>, label: string) =>
      d.getByText(label).nextElementSibling?.textContent;
    expect(value(long!, 'Long-context tier')).toBe('above 200,000 prompt tokens');
    expect(value(long!, 'Long-context input ratio')).toBe('2');
    expect(value(long!, 'Long-context output ratio')).toBe('1.5');
    expect(value(long!, 'Long-context cache ratio')).toBe('2');
    expect(value(long!, 'Web searches')).toBe('3 × $0.01');
    expect(value(long!, 'Fees (quota, before the group ratio)')).toBe('15,000 ($0.03)');
    expect(long!.queryByText('Service tier')).toBeNull();
    expect(value(priority!, 'Service tier')).toBe('priority');
    expect(value(priority!, 'Service tier ratio')).toBe('2');
    expect(priority!.queryByText('Long-context tier')).toBeNull();
  });

  it('names them in Chinese too', async () => {
    await i18next.changeLanguage('zh');
    try {
      await renderScreen(() => (
        <LogDetails
          log={{ ...consume, other: JSON.stringify({ ...longCall, ...priorityCall }) }}
          admin={false}
        />
      ));
      const d = within(await screen.findByLabelText('日志详情'));
      expect(d.getByText('长上下文档位').nextElementSibling?.textContent).toBe('提示超过 200,000 tokens');
      expect(d.getByText('服务等级').nextElementSibling?.textContent).toBe('priority');
      expect(d.getByText('网页搜索').nextElementSibling?.textContent).toBe('3 × $0.01');
    } finally {
      await i18next.changeLanguage('en');
    }
  });

  it('opens the per-user info dialog when an admin clicks a username', async () => {
    setSessionUser(admin);
    serve();
    const user = userEvent.setup();
    await renderScreen(() => <LogsPage />);
    const [first] = await screen.findAllByRole('button', { name: 'alice' });
    await user.click(first as HTMLElement);
    const dialog = await screen.findByRole('dialog');
    expect(await within(dialog).findByText('$3.00')).toBeTruthy();
    expect(within(dialog).getByText('42')).toBeTruthy();
  });

  it('remembers the column settings', async () => {
    setSessionUser(member);
    serve();
    const user = userEvent.setup();
    const first = await renderScreen(() => <LogsPage />);
    await screen.findByText('gpt-4o-mini');
    await user.click(screen.getByRole('button', { name: 'Columns' }));
    const dialog = await screen.findByRole('dialog');
    await user.click(within(dialog).getByLabelText('Group'));
    await user.click(within(dialog).getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(screen.queryByRole('columnheader', { name: 'Group' })).toBeNull());
    expect(JSON.parse(localStorage.getItem(LOG_COLUMNS_KEY) ?? '{}').group).toBe(false);
    first.unmount();
    await renderScreen(() => <LogsPage />);
    await screen.findByText('gpt-4o-mini');
    expect(screen.queryByRole('columnheader', { name: 'Group' })).toBeNull();
    expect(screen.getByRole('columnheader', { name: 'Model' })).toBeTruthy();
  });

  it('says what to do when there are no records', async () => {
    setSessionUser(member);
    fakeServer({
      'GET /api/status': () => ({ body: { success: true, data: makeStatus() } }),
      'GET /api/log/self/': () => ({
        body: { success: true, data: { items: [], total: 0, page: 1, page_size: 10 } },
      }),
      'GET /api/log/self/stat': () => ({ body: { success: true, data: { quota: 0, rpm: 0, tpm: 0 } } }),
    });
    await renderScreen(() => <LogsPage />);
    expect(await screen.findByText('No usage records in this range')).toBeTruthy();
    expect(screen.getByText(/Widen the time range/)).toBeTruthy();
  });
});
