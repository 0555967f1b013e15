import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { setSessionUser } from '../../../lib/session.ts';
import type { SiteStatus } from '../../../lib/status.ts';
import { fakeServer, makeStatus, renderScreen } from '../../../testing/render.tsx';
import { toLocalInput } from '../../logs/rules.ts';
import type { QuotaDataRow } from '../api/data.ts';
import {
  bucketStart,
  buildTimeline,
  modelBreakdown,
  OTHER_MODELS,
  stackedSeries,
  summarize,
} from '../buckets.ts';
import { niceTicks } from '../chart-scale.ts';
import { toDataFilters } from '../filters.ts';
import { validateDataFilters } from '../validation.ts';
import { DashboardPage } from './dashboard-page.tsx';

/** Unix seconds of a local time. */
const at = (month: number, day: number, hour = 0, minute = 0) =>
  Math.floor(new Date(2026, month - 1, day, hour, minute).getTime() / 1000);
const HOUR = 3600;
const DAY = 24 * HOUR;

const row = (model_name: string, created_at: number, quota: number, token_used: number, count: number) =>
  ({
    id: 0,
    user_id: 0,
    username: '',
    model_name,
    created_at,
    token_used,
    count,
    quota,
  }) satisfies QuotaDataRow;

const admin = { id: 1, username: 'root', display_name: 'Root', role: 100, status: 1, group: 'default' };
const member = { id: 2, username: 'ann', display_name: 'Ann', role: 1, status: 1, group: 'default' };

describe('dashboard bucketing', () => {
  it('starts hour, day and week buckets on the hour, at midnight and on Monday', () => {
    // 7 January 2026 is a Wednesday
    expect(bucketStart(at(1, 7, 15, 42), 'hour')).toBe(at(1, 7, 15));
    expect(bucketStart(at(1, 7, 15, 42), 'day')).toBe(at(1, 7));
    expect(bucketStart(at(1, 7, 15, 42), 'week')).toBe(at(1, 5));
    expect(bucketStart(at(1, 11, 23, 59), 'week')).toBe(at(1, 5));
    expect(bucketStart(at(1, 12, 0, 0), 'week')).toBe(at(1, 12));
  });

  it('covers the whole range, with zero for hours without usage', () => {
    const rows = [
      row('gpt-4o', at(1, 7, 10), 100, 1000, 2),
      row('claude', at(1, 7, 10), 50, 500, 1),
      row('gpt-4o', at(1, 7, 12), 30, 300, 1),
      row('gpt-4o', at(1, 9, 12), 999, 999, 9), // outside the range
    ];
    const timeline = buildTimeline(rows, 'hour', { start: at(1, 7, 10), end: at(1, 7, 13, 30) });
    expect(timeline.map((b) => [b.start, b.quota, b.tokens, b.count])).toEqual([
      [at(1, 7, 10), 150, 1500, 3],
      [at(1, 7, 11), 0, 0, 0],
      [at(1, 7, 12), 30, 300, 1],
      [at(1, 7, 13), 0, 0, 0],
    ]);
    expect(timeline[0]?.byModel).toEqual({
      'gpt-4o': { quota: 100, tokens: 1000, count: 2 },
      claude: { quota: 50, tokens: 500, count: 1 },
    });
  });

  it('sums the hours of a day and the days of a week', () => {
    const rows = [
      row('gpt-4o', at(1, 7, 1), 10, 100, 1),
      row('gpt-4o', at(1, 7, 23), 20, 200, 2),
      row('gpt-4o', at(1, 8, 5), 5, 50, 1),
      row('gpt-4o', at(1, 12, 5), 7, 70, 1),
    ];
    const days = buildTimeline(rows, 'day', { start: at(1, 7), end: at(1, 8, 12) });
    expect(days.map((b) => [b.start, b.quota])).toEqual([
      [at(1, 7), 30],
      [at(1, 8), 5],
    ]);
    const weeks = buildTimeline(rows, 'week', { start: at(1, 7), end: at(1, 12, 12) });
    expect(weeks.map((b) => [b.start, b.quota, b.count])).toEqual([
      [at(1, 5), 35, 4],
      [at(1, 12), 7, 1],
    ]);
  });

  it('averages requests and tokens per minute over the part of the range already past', () => {
    const rows = [row('a', at(1, 7, 10), 10, 600, 30), row('b', at(1, 7, 11), 10, 600, 30)];
    const range = { start: at(1, 7, 10), end: at(1, 7, 14) };
    // two hours have passed: 60 requests and 1200 tokens in 120 minutes
    expect(summarize(rows, range, at(1, 7, 12))).toEqual({
      quota: 20,
      tokens: 1200,
      count: 60,
      rpm: 0.5,
      tpm: 10,
    });
    expect(summarize([], range, at(1, 7, 12))).toMatchObject({ quota: 0, rpm: 0, tpm: 0 });
  });

  it('ranks models by the metric and folds the smallest into "other" past the limit', () => {
    const rows = [
      row('small', at(1, 7, 10), 1, 900, 1),
      row('big', at(1, 7, 10), 100, 10, 1),
      row('mid', at(1, 7, 11), 50, 10, 1),
    ];
    expect(modelBreakdown(rows, 'quota').map((m) => m.model)).toEqual(['big', 'mid', 'small']);
    expect(modelBreakdown(rows, 'tokens').map((m) => m.model)).toEqual(['small', 'big', 'mid']);
    const timeline = buildTimeline(rows, 'hour', { start: at(1, 7, 10), end: at(1, 7, 11) });
    expect(stackedSeries(rows, timeline, 'quota', 2)).toEqual([
      { key: 'big', values: [100, 0] },
      { key: OTHER_MODELS, values: [1, 50] },
    ]);
    expect(stackedSeries(rows, timeline, 'quota', 3).map((s) => s.key)).toEqual(['big', 'mid', 'small']);
  });

  it('gives the y axis round ticks that reach the peak', () => {
    expect(niceTicks(0)).toEqual([0, 1]);
    expect(niceTicks(7)).toEqual([0, 2, 4, 6, 8]);
    expect(niceTicks(1000)).toEqual([0, 250, 500, 750, 1000]);
    expect(niceTicks(0.3)).toEqual([0, 0.1, 0.2, 0.3]);
  });
});

describe('dashboard filters', () => {
  const now = at(3, 1, 12);
  const form = (start: number | string, end: number | string, extra = {}) => ({
    start: typeof start === 'number' ? toLocalInput(start) : start,
    end: typeof end === 'number' ? toLocalInput(end) : end,
    username: '',
    granularity: 'day' as const,
    ...extra,
  });

  it('needs a start, an end not before it, and lets an empty end mean now', () => {
    expect(validateDataFilters(form('', now), false, now)).toEqual({ start: 'validation.startRequired' });
    expect(validateDataFilters(form(now, now - DAY), false, now)).toEqual({
      end: 'validation.endBeforeStart',
    });
    expect(validateDataFilters(form(now - DAY, ''), false, now)).toEqual({});
  });

  it('limits a user, not an admin, to 30 days', () => {
    expect(validateDataFilters(form(now - 31 * DAY, now), false, now)).toEqual({
      start: 'validation.spanTooLong',
    });
    expect(validateDataFilters(form(now - 30 * DAY, now), false, now)).toEqual({});
    expect(validateDataFilters(form(now - 90 * DAY, now), true, now)).toEqual({});
  });

  it('asks for a coarser granularity when the chart would have too many points', () => {
    expect(validateDataFilters(form(now - 90 * DAY, now, { granularity: 'hour' }), true, now)).toEqual({
      granularity: 'validation.tooManyPoints',
    });
    expect(validateDataFilters(form(now - 30 * DAY, now, { granularity: 'hour' }), false, now)).toEqual({});
  });

  it('caps the admin username at 64 characters', () => {
    expect(validateDataFilters(form(now - DAY, now, { username: 'x'.repeat(65) }), true, now)).toEqual({
      username: 'validation.usernameTooLong',
    });
  });

  it('moves the start back to its hour, but never past the 30 days a user may ask', () => {
    expect(toDataFilters(form(at(1, 7, 10, 30), at(1, 7, 18)), true)).toEqual({
      start: at(1, 7, 10),
      end: at(1, 7, 18),
      username: '',
    });
    const end = at(2, 6, 10, 30);
    expect(toDataFilters(form(end - 30 * DAY, end), false).start).toBe(end - 30 * DAY);
    // an admin's username is trimmed; a user's is never sent
    expect(toDataFilters(form(end - DAY, end, { username: ' ann ' }), true).username).toBe('ann');
    expect(toDataFilters(form(end - DAY, end, { username: 'ann' }), false).username).toBe('');
  });
});

describe('dashboard page', () => {
  afterEach(() => vi.unstubAllGlobals());

  const nowHour = () => {
    const s = Math.floor(Date.now() / 1000);
    return s - (s % HOUR);
  };

  function serve({
    status = {},
    rows = [] as QuotaDataRow[],
    answer,
  }: {
    status?: Partial<SiteStatus> & { data_export_default_time?: string };
    rows?: QuotaDataRow[];
    answer?: { status: number; body: unknown };
  } = {}) {
    const data = () => answer ?? { body: { success: true, data: rows } };
    return fakeServer({
      'GET /api/status': () => ({
        body: {
          success: true,
          data: { ...makeStatus({ enable_data_export: true }), data_export_default_time: 'day', ...status },
        },
      }),
      'GET /api/data/': data,
      'GET /api/data/self': data,
    });
  }

  const sample = () => {
    const h = nowHour();
    return [
      // the current hour, so it lands in today's bucket whatever the time of day
      row('gpt-4o', h, 500000, 12000, 40),
      row('claude', h, 100000, 3000, 10),
      row('gpt-4o', h - 2 * DAY, 150000, 5000, 10),
    ];
  };

  it('tells a user the dashboard is off until an admin enables data export', async () => {
    setSessionUser(member);
    const server = serve({ status: { enable_data_export: false } });
    await renderScreen(() => <DashboardPage />, { path: '/detail' });
    expect(await screen.findByText('The data dashboard is turned off')).toBeTruthy();
    expect(screen.getByText(/once an administrator enables data export/)).toBeTruthy();
    expect(screen.queryByRole('link', { name: 'Open system settings' })).toBeNull();
    expect(server.callsTo('GET', '/api/data/self')).toHaveLength(0);
  });

  it('points an admin to the setting that turns it on', async () => {
    setSessionUser(admin);
    serve({ status: { enable_data_export: false } });
    await renderScreen(() => <DashboardPage />, { path: '/detail' });
    expect(await screen.findByText(/Enable data export under System settings/)).toBeTruthy();
    expect(screen.getByRole('link', { name: 'Open system settings' }).getAttribute('href')).toBe('/setting');
  });

  it("shows a user's own totals and charts over the default window", async () => {
    setSessionUser(member);
    const server = serve({ rows: sample() });
    await renderScreen(() => <DashboardPage />, { path: '/detail' });
    expect(await screen.findByText('$1.50')).toBeTruthy();
    expect(screen.getByText('20K')).toBeTruthy();
    expect(screen.getByText('60')).toBeTruthy();
    expect(screen.queryByLabelText('Username')).toBeNull();
    expect(server.callsTo('GET', '/api/data/')).toHaveLength(0);
    // DataExportDefaultTime "day": a week back, from the start of that hour
    const query = new URL(server.callsTo('GET', '/api/data/self')[0]?.url ?? '', 'http://x').searchParams;
    const start = Number(query.get('start_timestamp'));
    const end = Number(query.get('end_timestamp'));
    expect(start % HOUR).toBe(0);
    expect(end - start).toBeGreaterThanOrEqual(7 * DAY);
    expect(end - start).toBeLessThan(7 * DAY + HOUR + 60);
    expect(query.has('username')).toBe(false);
    expect((screen.getByLabelText('Group by') as HTMLSelectElement).value).toBe('day');

    const trend = screen.getByRole('slider', { name: 'Quota over time' });
    expect(trend.querySelectorAll('[data-bucket]').length).toBeGreaterThanOrEqual(8);
    const byModel = screen.getByRole('slider', { name: 'Quota by model over time' });
    // the last day (today) holds $1.00 of gpt-4o and $0.20 of claude
    const buckets = byModel.querySelectorAll('[data-bucket]');
    const today = buckets[buckets.length - 1] as Element;
    fireEvent.mouseMove(today);
    const tooltip = await screen.findByRole('tooltip');
    expect(within(tooltip).getByText('gpt-4o')).toBeTruthy();
    expect(within(tooltip).getByText('$1.00')).toBeTruthy();
    expect(within(tooltip).getByText('claude')).toBeTruthy();
    expect(within(tooltip).getByText('$0.20')).toBeTruthy();
    expect(within(tooltip).getByText('$1.20')).toBeTruthy();
    fireEvent.mouseLeave(byModel);
    expect(screen.queryByRole('tooltip')).toBeNull();

    // the model breakdown: gpt-4o has $1.30 of $1.50
    expect(screen.getByText('$1.30 · 86.7%')).toBeTruthy();
  });

  it('walks the buckets with the arrow keys and switches the charted metric', async () => {
    setSessionUser(member);
    serve({ rows: sample() });
    const user = userEvent.setup();
    await renderScreen(() => <DashboardPage />, { path: '/detail' });
    await screen.findByText('$1.50');
    await user.click(screen.getByRole('button', { name: 'Requests' }));
    const trend = screen.getByRole('slider', { name: 'Requests over time' });
    trend.focus();
    await user.keyboard('{ArrowLeft}');
    // the last bucket (today) holds 50 requests
    expect(within(await screen.findByRole('tooltip')).getByText('50')).toBeTruthy();
    expect(trend.getAttribute('aria-valuetext')).toMatch(/Requests 50$/);
  });

  it('regroups by hour without asking the server again', async () => {
    setSessionUser(member);
    const server = serve({ rows: sample() });
    const user = userEvent.setup();
    await renderScreen(() => <DashboardPage />, { path: '/detail' });
    await screen.findByText('$1.50');
    const count = () =>
      screen.getByRole('slider', { name: 'Quota over time' }).querySelectorAll('[data-bucket]').length;
    const byDay = count();
    await user.selectOptions(screen.getByLabelText('Group by'), 'hour');
    await waitFor(() => expect(count()).toBeGreaterThan(7 * 24));
    expect(byDay).toBeLessThan(10);
    expect(server.callsTo('GET', '/api/data/self')).toHaveLength(1);
  });

  it('lets an admin look at one user, and checks the range before asking', async () => {
    setSessionUser(admin);
    const server = serve({ rows: sample() });
    const user = userEvent.setup();
    await renderScreen(() => <DashboardPage />, { path: '/detail' });
    await screen.findByText('$1.50');
    await user.type(screen.getByLabelText('Username'), 'ann');
    await user.click(screen.getByRole('button', { name: 'Query' }));
    await waitFor(() =>
      expect(server.callsTo('GET', '/api/data/').some((c) => c.url.includes('username=ann'))).toBe(true),
    );

    const calls = server.callsTo('GET', '/api/data/').length;
    fireEvent.change(screen.getByLabelText('From'), { target: { value: '' } });
    await user.click(screen.getByRole('button', { name: 'Query' }));
    expect(await screen.findByText('Choose a start time')).toBeTruthy();
    expect(server.callsTo('GET', '/api/data/')).toHaveLength(calls);
  });

  it('refuses a user range over 30 days without asking the server', async () => {
    setSessionUser(member);
    const server = serve({ rows: sample() });
    const user = userEvent.setup();
    await renderScreen(() => <DashboardPage />, { path: '/detail' });
    await screen.findByText('$1.50');
    const longAgo = toLocalInput(Math.floor(Date.now() / 1000) - 40 * DAY);
    fireEvent.change(screen.getByLabelText('From'), { target: { value: longAgo } });
    await user.click(screen.getByRole('button', { name: 'Query' }));
    expect(await screen.findByText('The range may span at most 30 days')).toBeTruthy();
    expect(server.callsTo('GET', '/api/data/self')).toHaveLength(1);
  });

  it('says what to do when the range has no usage', async () => {
    setSessionUser(member);
    serve({ rows: [] });
    await renderScreen(() => <DashboardPage />, { path: '/detail' });
    expect(await screen.findByText('No usage in this range')).toBeTruthy();
    expect(screen.getByText(/Choose a longer range/)).toBeTruthy();
    expect(screen.queryByRole('slider')).toBeNull();
  });

  it('shows the off state when the server says the dashboard was turned off meanwhile', async () => {
    setSessionUser(member);
    serve({
      answer: {
        status: 403,
        body: {
          success: false,
          code: 'FEATURE_DISABLED',
          message: 'the data dashboard is turned off (DataExportEnabled)',
        },
      },
    });
    await renderScreen(() => <DashboardPage />, { path: '/detail' });
    expect(await screen.findByText('The data dashboard is turned off')).toBeTruthy();
  });

  it('shows another failure in place with a retry', async () => {
    setSessionUser(member);
    const server = serve({ answer: { status: 400, body: { success: false, message: 'bad range' } } });
    const user = userEvent.setup();
    await renderScreen(() => <DashboardPage />, { path: '/detail' });
    expect(await screen.findByText('Could not load the usage data: bad range')).toBeTruthy();
    await user.click(screen.getByRole('button', { name: 'Try again' }));
    await waitFor(() => expect(server.callsTo('GET', '/api/data/self')).toHaveLength(2));
  });
});
