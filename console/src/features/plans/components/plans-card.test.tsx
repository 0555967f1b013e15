import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { fakeServer, makeStatus, renderScreen } from '../../../testing/render.tsx';
import { PlansCard } from './plans-card.tsx';

const plan = {
  id: 4,
  title: 'Pro',
  subtitle: 'for coding agents',
  price_amount: 20,
  currency: 'USD',
  duration_unit: 'month',
  duration_value: 1,
  custom_seconds: 0,
  enabled: true,
  sort_order: 0,
  stripe_price_id: '',
  creem_product_id: 'prod_1',
  max_purchase_per_user: 0,
  upgrade_group: 'vip',
  total_amount: 5_000_000,
  quota_reset_period: 'daily',
  quota_reset_custom_seconds: 0,
  created_at: 0,
  updated_at: 0,
};

const held = {
  id: 9,
  user_id: 2,
  plan_id: 4,
  plan_title: 'Pro',
  amount_total: 5_000_000,
  amount_used: 1_250_000,
  start_time: 1_795_824_000,
  end_time: 1_798_502_340,
  status: 'active',
  source: 'order',
  last_reset_time: 1_795_824_000,
  next_reset_time: 1_795_910_400,
  upgrade_group: 'vip',
  prev_user_group: 'default',
  quota_reset_period: 'daily',
};

describe('the wallet plans card', () => {
  it("shows what the allowance has left ($7.50 of $10.00 at 500,000 quota a dollar) and sends a buyer to Stripe's page", async () => {
    const left: string[] = [];
    const server = fakeServer({
      'GET /api/status': () => ({ body: { success: true, data: makeStatus() } }),
      'GET /api/subscription/plans': () => ({ body: { success: true, data: [{ plan }] } }),
      'GET /api/subscription/self': () => ({
        body: {
          success: true,
          data: { billing_preference: 'subscription_first', subscriptions: [{ subscription: held }] },
        },
      }),
      'POST /api/subscription/stripe/pay': () => ({
        body: { success: true, data: { pay_link: 'https://checkout.stripe.com/c/pay/cs_test_1' } },
      }),
    });
    await renderScreen(() => <PlansCard openCheckout={(url) => left.push(url)} />);
    expect(await screen.findByText(/\$7\.50 of \$10\.00 left in this period \(\$2\.50 used\)/)).toBeTruthy();
    expect(screen.getByText('$10.00 a day')).toBeTruthy();
    await userEvent.click(screen.getByRole('button', { name: 'Buy by card' }));
    await waitFor(() => expect(left).toEqual(['https://checkout.stripe.com/c/pay/cs_test_1']));
    expect(server.callsTo('POST', '/api/subscription/stripe/pay').map((c) => c.body)).toEqual([
      { plan_id: 4 },
    ]);
    expect(screen.getByRole('button', { name: 'Buy through Creem' })).toBeTruthy();
  });

  it('renders nothing when nothing is on sale and nothing is held', async () => {
    fakeServer({
      'GET /api/status': () => ({ body: { success: true, data: makeStatus() } }),
      'GET /api/subscription/plans': () => ({ body: { success: true, data: [] } }),
      'GET /api/subscription/self': () => ({ body: { success: true, data: { subscriptions: [] } } }),
    });
    const { container } = await renderScreen(() => <PlansCard />);
    await waitFor(() => expect(container.querySelector('section')).toBeNull());
  });
});
