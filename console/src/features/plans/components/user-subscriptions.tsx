import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Button, Select, Tag } from '../../../components/ui/index.ts';
import { formatTimestamp } from '../../../lib/format.ts';
import { useQuotaDisplay } from '../../../lib/status.ts';
import { toast } from '../../../lib/toast.ts';
import {
  adminPlansQueryKey,
  cancelSubscription,
  fetchAdminPlans,
  fetchUserSubscriptions,
  grantPlan,
  userSubscriptionsQueryKey,
} from '../api/plans.ts';
import { AllowanceLine } from './allowance-line.tsx';

/** The user editor's plans (docs/adr/0049): what the user holds, granting a plan without payment, ending one. */
export function UserSubscriptions({ userId }: { userId: number }) {
  const { t } = useTranslation('plans');
  const display = useQuotaDisplay();
  const queryClient = useQueryClient();
  const subs = useQuery({
    queryKey: userSubscriptionsQueryKey(userId),
    queryFn: () => fetchUserSubscriptions(userId),
  });
  const plans = useQuery({ queryKey: adminPlansQueryKey, queryFn: fetchAdminPlans });
  const [chosen, setChosen] = useState('');
  const refresh = () => queryClient.invalidateQueries({ queryKey: userSubscriptionsQueryKey(userId) });

  const grant = async () => {
    if (!chosen) return;
    try {
      await grantPlan(userId, Number(chosen));
      toast.success(t('user.granted'));
      await refresh();
    } catch {
      // the request client has shown the message
    }
  };
  const cancel = async (id: number) => {
    try {
      await cancelSubscription(id);
      await refresh();
    } catch {
      // the request client has shown the message
    }
  };

  return (
    <fieldset className="mt-2 flex flex-col gap-2">
      <legend className="mb-1 text-sm font-medium">{t('user.title')}</legend>
      {(subs.data ?? []).length === 0 ? <p className="text-sm text-gray-500">{t('user.none')}</p> : null}
      <ul className="flex flex-col gap-2 text-sm">
        {(subs.data ?? []).map((sub) => (
          <li key={sub.id} className="flex flex-wrap items-center gap-2">
            <span className="font-medium">{sub.plan_title}</span>
            <Tag color={sub.status === 'active' ? 'green' : 'gray'}>{t(`status.${sub.status}`)}</Tag>
            <span>{t('wallet.until', { time: formatTimestamp(sub.end_time) })}</span>
            {sub.status === 'active' ? <AllowanceLine subscription={sub} display={display} /> : null}
            {sub.status === 'active' ? (
              <Button size="sm" variant="secondary" onClick={() => void cancel(sub.id)}>
                {t('user.cancel')}
              </Button>
            ) : null}
          </li>
        ))}
      </ul>
      <div className="flex items-end gap-2">
        <Select
          label={t('user.grantLabel')}
          value={chosen}
          onChange={(e) => setChosen(e.target.value)}
          options={[
            { value: '', label: '—' },
            ...(plans.data ?? []).map((plan) => ({ value: String(plan.id), label: plan.title })),
          ]}
        />
        <Button size="sm" disabled={!chosen} onClick={() => void grant()}>
          {t('user.grant')}
        </Button>
      </div>
    </fieldset>
  );
}
