import { useTranslation } from 'react-i18next';
import { formatQuota } from '../../../lib/format.ts';
import type { useQuotaDisplay } from '../../../lib/status.ts';
import type { SubscriptionViewWire } from '../api/plans.ts';

/** What an allowance has spent and left in its current period, and when it starts again. */
export function AllowanceLine({
  subscription,
  display,
}: {
  subscription: SubscriptionViewWire;
  display: ReturnType<typeof useQuotaDisplay>;
}) {
  const { t } = useTranslation('plans');
  if (subscription.amount_total <= 0) return <p>{t('allowance.unlimited')}</p>;
  const left = Math.max(0, subscription.amount_total - subscription.amount_used);
  return (
    <p>
      {t('allowance.left', {
        left: formatQuota(left, display),
        total: formatQuota(subscription.amount_total, display),
        used: formatQuota(subscription.amount_used, display),
      })}
    </p>
  );
}
