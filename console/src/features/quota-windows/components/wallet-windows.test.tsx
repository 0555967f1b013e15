/** The wallet's budget windows: what the user's own and their group's windows have spent, left and reset. */
import { screen, within } from '@testing-library/react';
import i18next from 'i18next';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { setSessionUser } from '../../../lib/session.ts';
import { fakeServer, makeStatus, renderScreen } from '../../../testing/render.tsx';
import type { WalletSelf } from '../../wallet/api/wallet.ts';
import { WalletPage } from '../../wallet/components/wallet-page.tsx';
import { nextMidnight } from '../testing/clock.ts';

/** A flow through a whole screen: slower than one check when the machine is busy. */
const SLOW = { timeout: 20_000 };

/** 2100-01-02T12:00:00Z: far enough to be shown with its date (the 2nd or the 3rd in every time zone). */
const FAR = 4_102_574_400;

function serve(self: Partial<WalletSelf>, status = makeStatus()) {
  return fakeServer({
    'GET /api/status': () => ({ body: { success: true, data: status } }),
    'GET /api/user/self': () => ({
      body: {
        success: true,
        data: { id: 1, quota: 1_000_000, used_quota: 250_000, request_count: 12, group: 'vip', ...self },
      },
    }),
  });
}

const card = async (name: string) => within(await screen.findByRole('region', { name }));

describe('budget windows on the wallet', () => {
  beforeEach(() =>
    setSessionUser({ id: 1, username: 'alice', display_name: 'Alice', role: 1, status: 1, group: 'vip' }),
  );
  afterEach(async () => {
    vi.unstubAllGlobals();
    await i18next.changeLanguage('en');
  });

  it("shows the user's windows and their group's: used, left and when each resets", SLOW, async () => {
    const midnight = nextMidnight();
    serve({
      quota_window_states: [
        {
          unit: 'quota',
          period: 'day',
          limit: 2_500_000,
          used: 600_000,
          left: 1_900_000,
          reset_at: midnight,
        },
        {
          unit: 'requests',
          period: 'rolling',
          hours: 5,
          limit: 200,
          used: 37,
          left: 163,
          reset_at: midnight - 3600,
        },
      ],
      group_quota_window_states: [
        { unit: 'quota', period: 'month', limit: 50_000_000, used: 50_000_000, left: 0, reset_at: FAR },
      ],
    });
    await renderScreen(() => <WalletPage />);
    const windows = await card('Budget windows');
    const own = within(windows.getByText('Your windows').parentElement as HTMLElement);
    expect(own.getByText('$1.20 of $5.00 today')).toBeTruthy();
    expect(own.getByText('$3.80 left · resets 00:00')).toBeTruthy();
    expect(own.getByText('37 of 200 requests in the last 5 hours')).toBeTruthy();
    expect(own.getByText('163 left · frees up from 23:00')).toBeTruthy();
    const group = within(windows.getByText('Windows of your group vip').parentElement as HTMLElement);
    expect(group.getByText('$100.00 of $100.00 this month')).toBeTruthy();
    expect(group.getByText(/^\$0\.00 left · resets 2100-01-0[23] \d{2}:\d{2}$/)).toBeTruthy();
  });

  it('says that only the balance limits spending when there are no windows', SLOW, async () => {
    serve({ quota_window_states: [], group_quota_window_states: [] });
    await renderScreen(() => <WalletPage />);
    const windows = await card('Budget windows');
    expect(windows.getByText('No budget windows: only the balance limits spending.')).toBeTruthy();
  });

  it(
    'shows quota units when the site does not show money, in Chinese for a Chinese console',
    SLOW,
    async () => {
      await i18next.changeLanguage('zh');
      serve(
        {
          quota_window_states: [
            {
              unit: 'quota',
              period: 'week',
              limit: 5_000_000,
              used: 1_250_000,
              left: 3_750_000,
              reset_at: FAR,
            },
          ],
        },
        makeStatus({ display_in_currency: false }),
      );
      await renderScreen(() => <WalletPage />);
      const windows = await card('预算窗口');
      expect(windows.getByText('本周已用 1,250,000 / 5,000,000')).toBeTruthy();
      expect(windows.getByText(/^剩余 3,750,000 · 2100-01-0[23] \d{2}:\d{2} 重置$/)).toBeTruthy();
    },
  );
});
