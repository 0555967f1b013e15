import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Button } from '../../../components/ui/index.ts';
import { formatQuota, formatTimestamp } from '../../../lib/format.ts';
import { useQuotaDisplay } from '../../../lib/status.ts';
import {
  fetchMySubscriptions,
  fetchPlansOnSale,
  mySubscriptionsQueryKey,
  type PlanView,
  payWithCreem,
  payWithStripe,
  plansQueryKey,
} from '../api/plans.ts';
import { AllowanceLine } from './allowance-line.tsx';

/** Leaves the console for a provider's checkout page. */
const leaveFor = (url: string): void => window.location.assign(url);

/**
 * The wallet's plans (docs/adr/0049): the caller's running subscriptions with what their allowance has left in this
 * period (it pays before the balance), and the plans on sale, bought by card through Stripe or through Creem.
 * Renders nothing when nothing is on sale and nothing is held.
 */
export function PlansCard({ openCheckout = leaveFor }: { openCheckout?: (url: string) => void }) {
  const { t } = useTranslation('plans');
  const display = useQuotaDisplay();
  const plans = useQuery({ queryKey: plansQueryKey, queryFn: fetchPlansOnSale, retry: false });
  const mine = useQuery({ queryKey: mySubscriptionsQueryKey, queryFn: fetchMySubscriptions, retry: false });
  const [busy, setBusy] = useState<number | null>(null);
  const onSale = plans.data ?? [];
  const held = mine.data ?? [];
  if (onSale.length === 0 && held.length === 0) return null;

  const buy = async (plan: PlanView, provider: 'stripe' | 'creem') => {
    setBusy(plan.id);
    try {
      const url =
        provider === 'stripe'
          ? (await payWithStripe(plan.id)).pay_link
          : (await payWithCreem(plan.id)).checkout_url;
      openCheckout(url);
    } catch {
      // the request client has shown the message
    } finally {
      setBusy(null);
    }
  };

  return (
    <section
      aria-label={t('wallet.title')}
      className="rounded-lg border border-gray-200 bg-white p-4 dark:border-gray-700 dark:bg-gray-900"
    >
      <h2 className="mb-3 text-base font-semibold">{t('wallet.title')}</h2>
      {held.length > 0 ? (
        <ul className="mb-4 flex flex-col gap-2">
          {held.map((sub) => (
            <li key={sub.id} className="text-sm">
              <p className="font-medium">{sub.plan_title}</p>
              <AllowanceLine subscription={sub} display={display} />
              <p className="text-gray-500">{t('wallet.until', { time: formatTimestamp(sub.end_time) })}</p>
            </li>
          ))}
        </ul>
      ) : (
        <p className="mb-4 text-sm text-gray-500">{t('wallet.none')}</p>
      )}
      {onSale.length > 0 ? (
        <ul className="grid gap-3 sm:grid-cols-2">
          {onSale.map((plan) => (
            <li key={plan.id} className="rounded border border-gray-200 p-3 dark:border-gray-700">
              <p className="font-medium">{plan.title}</p>
              {plan.subtitle ? <p className="text-sm text-gray-500">{plan.subtitle}</p> : null}
              <p className="text-sm">
                {t('wallet.price', { price: plan.price_amount.toFixed(2), currency: plan.currency })}
              </p>
              <p className="text-sm">
                {plan.total_amount > 0
                  ? t(`period.${plan.quota_reset_period}`, { quota: formatQuota(plan.total_amount, display) })
                  : t('wallet.unlimited')}
              </p>
              <div className="mt-2 flex gap-2">
                <Button size="sm" disabled={busy !== null} onClick={() => void buy(plan, 'stripe')}>
                  {t('wallet.buyCard')}
                </Button>
                {plan.creem_product_id ? (
                  <Button
                    size="sm"
                    variant="secondary"
                    disabled={busy !== null}
                    onClick={() => void buy(plan, 'creem')}
                  >
                    {t('wallet.buyCreem')}
                  </Button>
                ) : null}
              </div>
            </li>
          ))}
        </ul>
      ) : null}
    </section>
  );
}
