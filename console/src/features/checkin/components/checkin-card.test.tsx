import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { setSessionUser } from '../../../lib/session.ts';
import { fakeServer, makeStatus, renderScreen } from '../../../testing/render.tsx';
import { CheckinCard } from './checkin-card.tsx';

const status = (checkedIn: boolean) => ({
  enabled: true,
  min_quota: 1000,
  max_quota: 10000,
  stats: {
    total_quota: checkedIn ? 6000 : 1000,
    total_checkins: checkedIn ? 2 : 1,
    checkin_count: checkedIn ? 2 : 1,
    checked_in_today: checkedIn,
    records: [
      ...(checkedIn ? [{ checkin_date: '2026-11-29', quota_awarded: 5000 }] : []),
      { checkin_date: '2026-11-28', quota_awarded: 1000 },
    ],
  },
});

describe('daily check-in card', () => {
  beforeEach(() =>
    setSessionUser({ id: 4, username: 'alice', display_name: 'Alice', role: 1, status: 1, group: 'default' }),
  );
  afterEach(() => {
    vi.restoreAllMocks();
    vi.unstubAllGlobals();
  });

  it('shows nothing while check-ins are off', async () => {
    fakeServer({
      'GET /api/status': () => ({ body: { success: true, data: makeStatus() } }),
      'GET /api/user/checkin': () => ({
        status: 403,
        body: { success: false, code: 'FEATURE_DISABLED', message: 'check-in is not enabled' },
      }),
    });
    const { container } = await renderScreen(() => <CheckinCard />);
    await waitFor(() => expect(container.querySelector('section')).toBeNull());
    expect(screen.queryByRole('button', { name: 'Check in' })).toBeNull();
  });

  it('checks in once, says what it brought, then shows today done and the history', async () => {
    let done = false;
    const server = fakeServer({
      'GET /api/status': () => ({ body: { success: true, data: makeStatus() } }),
      'GET /api/user/checkin': () => ({ body: { success: true, data: status(done) } }),
      'POST /api/user/checkin': () => {
        done = true;
        return { body: { success: true, data: { quota_awarded: 5000, checkin_date: '2026-11-29' } } };
      },
    });
    const user = userEvent.setup();
    await renderScreen(() => <CheckinCard />);
    await user.click(await screen.findByRole('button', { name: 'Check in' }));
    // 5,000 quota at 500,000 per dollar.
    expect(await screen.findByText('Checked in: $0.01 added')).toBeTruthy();
    const today = await screen.findByRole('button', { name: 'Checked in today' });
    expect((today as HTMLButtonElement).disabled).toBe(true);
    expect(screen.getByText('2026-11-29')).toBeTruthy();
    expect(screen.getByText('2 check-in(s) this month')).toBeTruthy();
    expect(server.callsTo('POST', '/api/user/checkin')).toHaveLength(1);
  });
});
