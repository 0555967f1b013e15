import { useQuery, useQueryClient } from '@tanstack/react-query';
import { PLAN_DURATION_UNITS, PLAN_RESET_PERIODS } from '@turnpike/core/domain/closed-sets';
import { type FormEvent, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Button, Input, Modal, Select, Switch, Tag } from '../../../components/ui/index.ts';
import { formatQuota } from '../../../lib/format.ts';
import { useQuotaDisplay } from '../../../lib/status.ts';
import { toast } from '../../../lib/toast.ts';
import {
  adminPlansQueryKey,
  createPlan,
  fetchAdminPlans,
  type PlanDraft,
  type PlanView,
  updatePlan,
} from '../api/plans.ts';

const EMPTY: PlanDraft = {
  title: '',
  subtitle: '',
  price_amount: 0,
  currency: 'USD',
  duration_unit: 'month',
  duration_value: 1,
  custom_seconds: 0,
  enabled: true,
  sort_order: 0,
  stripe_price_id: '',
  creem_product_id: '',
  max_purchase_per_user: 0,
  upgrade_group: '',
  total_amount: 0,
  quota_reset_period: 'never',
  quota_reset_custom_seconds: 0,
};

const draftOf = (plan: PlanView): PlanDraft => ({
  ...EMPTY,
  ...plan,
  duration_unit: plan.duration_unit as PlanDraft['duration_unit'],
  quota_reset_period: plan.quota_reset_period as PlanDraft['quota_reset_period'],
});

/**
 * The administrators' plans (docs/adr/0049): each plan's price, term, allowance and group, turned on or off for new
 * buyers, made and edited in a form. Subscriptions already sold keep the terms they were sold with.
 */
export function PlansAdminPage() {
  const { t } = useTranslation('plans');
  const display = useQuotaDisplay();
  const queryClient = useQueryClient();
  const plans = useQuery({ queryKey: adminPlansQueryKey, queryFn: fetchAdminPlans });
  const [editing, setEditing] = useState<{ id: number | null; draft: PlanDraft } | null>(null);

  const save = async (id: number | null, draft: PlanDraft) => {
    try {
      if (id === null) await createPlan(draft);
      else await updatePlan(id, draft);
      toast.success(t('admin.saved'));
      setEditing(null);
      await queryClient.invalidateQueries({ queryKey: ['plans'] });
    } catch {
      // the request client has shown the message
    }
  };

  return (
    <div className="flex flex-col gap-4 p-4">
      <div className="flex items-center justify-between">
        <h1 className="text-lg font-semibold">{t('admin.title')}</h1>
        <Button onClick={() => setEditing({ id: null, draft: EMPTY })}>{t('admin.add')}</Button>
      </div>
      <table className="w-full text-sm">
        <thead>
          <tr className="text-left text-gray-500">
            <th>{t('field.title')}</th>
            <th>{t('field.price')}</th>
            <th>{t('field.duration')}</th>
            <th>{t('field.allowance')}</th>
            <th>{t('field.group')}</th>
            <th>{t('field.enabled')}</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {(plans.data ?? []).map((plan) => (
            <tr key={plan.id} className="border-t border-gray-200 dark:border-gray-700">
              <td>{plan.title}</td>
              <td>
                {plan.price_amount.toFixed(2)} {plan.currency}
              </td>
              <td>
                {plan.duration_unit === 'custom'
                  ? t('duration.seconds', { count: plan.custom_seconds })
                  : t(`duration.${plan.duration_unit}`, { count: plan.duration_value })}
              </td>
              <td>
                {plan.total_amount > 0
                  ? t(`period.${plan.quota_reset_period}`, { quota: formatQuota(plan.total_amount, display) })
                  : t('allowance.unlimited')}
              </td>
              <td>{plan.upgrade_group || '—'}</td>
              <td>
                <Tag color={plan.enabled ? 'green' : 'gray'}>
                  {plan.enabled ? t('admin.on') : t('admin.off')}
                </Tag>
              </td>
              <td className="flex gap-2">
                <Button
                  size="sm"
                  variant="secondary"
                  onClick={() => setEditing({ id: plan.id, draft: draftOf(plan) })}
                >
                  {t('admin.edit')}
                </Button>
                <Button
                  size="sm"
                  variant="secondary"
                  onClick={() => void save(plan.id, { ...draftOf(plan), enabled: !plan.enabled })}
                >
                  {plan.enabled ? t('admin.disable') : t('admin.enable')}
                </Button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {editing ? (
        <PlanForm
          draft={editing.draft}
          isNew={editing.id === null}
          onClose={() => setEditing(null)}
          onSave={(draft) => save(editing.id, draft)}
        />
      ) : null}
    </div>
  );
}

function PlanForm({
  draft,
  isNew,
  onClose,
  onSave,
}: {
  draft: PlanDraft;
  isNew: boolean;
  onClose: () => void;
  onSave: (draft: PlanDraft) => Promise<void>;
}) {
  const { t } = useTranslation('plans');
  const [form, setForm] = useState(draft);
  const number = (key: keyof PlanDraft) => (e: { target: { value: string } }) =>
    setForm({ ...form, [key]: Number(e.target.value) });
  const text = (key: keyof PlanDraft) => (e: { target: { value: string } }) =>
    setForm({ ...form, [key]: e.target.value });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void onSave(form);
  };
  return (
    <Modal open onClose={onClose} title={isNew ? t('admin.add') : t('admin.edit')} size="lg">
      <form onSubmit={submit} className="grid gap-3 sm:grid-cols-2">
        <Input label={t('field.title')} value={form.title} onChange={text('title')} required />
        <Input label={t('field.subtitle')} value={form.subtitle} onChange={text('subtitle')} />
        <Input
          label={t('field.price')}
          type="number"
          step="0.01"
          value={form.price_amount}
          onChange={number('price_amount')}
        />
        <Input label={t('field.currency')} value={form.currency} onChange={text('currency')} />
        <Select
          label={t('field.durationUnit')}
          value={form.duration_unit}
          onChange={text('duration_unit')}
          options={PLAN_DURATION_UNITS.map((unit) => ({ value: unit, label: t(`unit.${unit}`) }))}
        />
        {form.duration_unit === 'custom' ? (
          <Input
            label={t('field.customSeconds')}
            type="number"
            value={form.custom_seconds}
            onChange={number('custom_seconds')}
          />
        ) : (
          <Input
            label={t('field.durationValue')}
            type="number"
            value={form.duration_value}
            onChange={number('duration_value')}
          />
        )}
        <Input
          label={t('field.totalAmount')}
          hint={t('field.totalAmountHint')}
          type="number"
          value={form.total_amount}
          onChange={number('total_amount')}
        />
        <Select
          label={t('field.resetPeriod')}
          value={form.quota_reset_period}
          onChange={text('quota_reset_period')}
          options={PLAN_RESET_PERIODS.map((period) => ({ value: period, label: t(`reset.${period}`) }))}
        />
        {form.quota_reset_period === 'custom' ? (
          <Input
            label={t('field.resetSeconds')}
            type="number"
            value={form.quota_reset_custom_seconds}
            onChange={number('quota_reset_custom_seconds')}
          />
        ) : null}
        <Input label={t('field.group')} value={form.upgrade_group} onChange={text('upgrade_group')} />
        <Input
          label={t('field.stripePrice')}
          value={form.stripe_price_id}
          onChange={text('stripe_price_id')}
        />
        <Input
          label={t('field.creemProduct')}
          value={form.creem_product_id}
          onChange={text('creem_product_id')}
        />
        <Input
          label={t('field.maxPurchases')}
          type="number"
          value={form.max_purchase_per_user}
          onChange={number('max_purchase_per_user')}
        />
        <Input
          label={t('field.sortOrder')}
          type="number"
          value={form.sort_order}
          onChange={number('sort_order')}
        />
        <Switch
          label={t('field.enabled')}
          checked={form.enabled}
          onChange={(enabled) => setForm({ ...form, enabled })}
        />
        <div className="flex justify-end gap-2 sm:col-span-2">
          <Button variant="secondary" type="button" onClick={onClose}>
            {t('admin.cancel')}
          </Button>
          <Button type="submit">{t('admin.save')}</Button>
        </div>
      </form>
    </Modal>
  );
}
