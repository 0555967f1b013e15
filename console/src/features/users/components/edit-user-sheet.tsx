import { useQuery } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import {
  Button,
  DialogFooter,
  Input,
  Modal,
  PageSpinner,
  Select,
  SideSheet,
} from '../../../components/ui/index.ts';
import { ApiError } from '../../../lib/api.ts';
import { formatQuota } from '../../../lib/format.ts';
import { useQuotaDisplay, useStatus } from '../../../lib/status.ts';
import { toast } from '../../../lib/toast.ts';
import { UserSubscriptions } from '../../plans/components/user-subscriptions.tsx';
import { useQuotaWindowsField } from '../../quota-windows/components/window-editor.tsx';
import { QuotaWindowStates } from '../../quota-windows/components/window-states.tsx';
import { fetchUser, type UserRow, updateUser } from '../api/users.ts';
import { validateQuotaDelta, validateUserUpdate } from '../rules.ts';
import { ResetSecondFactor } from './reset-second-factor.tsx';

interface EditForm {
  username: string;
  display_name: string;
  password: string;
  group: string;
  quota: string;
}

const bindings = [
  ['email', 'binding.email'],
  ['github_id', 'binding.github'],
  ['oidc_id', 'binding.oidc'],
  ['wechat_id', 'binding.wechat'],
  ['telegram_id', 'binding.telegram'],
  ['linux_do_id', 'binding.linuxdo'],
] as const;

/** The quota-add dialog: adds a signed amount to the form's quota; nothing is saved until the sheet is. */
function QuotaAddDialog({
  open,
  onClose,
  onAdd,
}: {
  open: boolean;
  onClose: () => void;
  onAdd: (delta: number) => void;
}) {
  const { t } = useTranslation('users');
  const status = useStatus();
  const [amount, setAmount] = useState('');
  const [error, setError] = useState<string | null>(null);
  const n = Number(amount);
  return (
    <Modal
      open={open}
      onClose={onClose}
      title={t('quotaAdd.title')}
      footer={
        <>
          <Button variant="secondary" onClick={onClose}>
            {t('common:common.cancel')}
          </Button>
          <Button
            onClick={() => {
              const problem = validateQuotaDelta(amount);
              setError(problem ? t(problem) : null);
              if (!problem) {
                onAdd(n);
                setAmount('');
              }
            }}
          >
            {t('common:common.confirm')}
          </Button>
        </>
      }
    >
      <Input
        label={t('quotaAdd.amount')}
        type="number"
        value={amount}
        error={error}
        hint={
          Number.isFinite(n) && amount
            ? t('quotaAdd.equals', {
                money: formatQuota(n, { quotaPerUnit: status.data?.quota_per_unit ?? 500000 }),
              })
            : t('quotaAdd.hint')
        }
        onChange={(e) => setAmount(e.target.value)}
      />
    </Modal>
  );
}

/** The edit-user side sheet (admin path): username, display name, password, group, quota; bindings read-only. */
export function EditUserSheet({
  id,
  groups,
  onClose,
  onSaved,
}: {
  id: number;
  groups: readonly string[];
  onClose: () => void;
  onSaved: () => void;
}) {
  const { t } = useTranslation('users');
  const { t: tw } = useTranslation('quota-windows');
  const display = useQuotaDisplay();
  const user = useQuery({ queryKey: ['user', id], queryFn: () => fetchUser(id), gcTime: 0 });
  const [form, setForm] = useState<EditForm | null>(null);
  const windows = useQuotaWindowsField(user.data?.quota_windows, user.data?.quota_window_states, display);
  const [error, setError] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);
  const [adding, setAdding] = useState(false);

  useEffect(() => {
    if (user.data && !form) {
      const u: UserRow = user.data;
      setForm({
        username: u.username,
        display_name: u.display_name,
        password: '',
        group: u.group,
        quota: String(u.quota),
      });
    }
  }, [user.data, form]);

  const submit = async () => {
    if (!form) return;
    const problem = validateUserUpdate(form);
    setError(problem ? t(problem) : null);
    if (problem) return;
    const budget = windows.check();
    if (!budget.ok) return;
    setSaving(true);
    try {
      await updateUser({
        id,
        username: form.username.trim(),
        display_name: form.display_name,
        password: form.password,
        group: form.group,
        quota: Number(form.quota),
        ...(budget.changed ? { quota_windows: budget.windows } : {}),
      });
      toast.success(t('edit.done'));
      onSaved();
      onClose();
    } catch (err) {
      setError(err instanceof ApiError ? err.message : String(err));
    } finally {
      setSaving(false);
    }
  };

  const groupOptions = [...new Set([...(form ? [form.group] : []), ...groups])].map((g) => ({
    value: g,
    label: g,
  }));

  return (
    <SideSheet
      open
      onClose={onClose}
      title={t('edit.title')}
      footer={
        <DialogFooter
          onCancel={onClose}
          onOk={() => void submit()}
          busy={saving}
          disabled={!form}
          okText={t('common:common.submit')}
        />
      }
    >
      {!form ? (
        <PageSpinner />
      ) : (
        <div className="flex flex-col gap-3">
          <Input
            label={t('field.username')}
            value={form.username}
            onChange={(e) => setForm({ ...form, username: e.target.value })}
          />
          <Input
            label={t('field.displayName')}
            value={form.display_name}
            onChange={(e) => setForm({ ...form, display_name: e.target.value })}
          />
          <Input
            label={t('field.password')}
            type="password"
            autoComplete="new-password"
            placeholder={t('field.newPasswordPlaceholder')}
            hint={t('field.passwordHint')}
            value={form.password}
            onChange={(e) => setForm({ ...form, password: e.target.value })}
          />
          <Select
            label={t('field.group')}
            value={form.group}
            options={groupOptions}
            onChange={(e) => setForm({ ...form, group: e.target.value })}
          />
          <div className="flex items-end gap-2">
            <div className="flex-1">
              <Input
                label={t('field.quota')}
                type="number"
                value={form.quota}
                onChange={(e) => setForm({ ...form, quota: e.target.value })}
              />
            </div>
            <Button variant="secondary" onClick={() => setAdding(true)}>
              {t('quotaAdd.open')}
            </Button>
          </div>
          {windows.editor}
          {user.data?.group_quota_window_states?.length ? (
            <section
              className="flex flex-col gap-2"
              aria-label={tw('user.group', { group: user.data.group })}
            >
              <p className="text-sm font-medium">{tw('user.group', { group: user.data.group })}</p>
              <QuotaWindowStates states={user.data.group_quota_window_states} display={display} />
            </section>
          ) : null}
          <fieldset className="mt-2 flex flex-col gap-2">
            <legend className="mb-1 text-sm font-medium">{t('binding.title')}</legend>
            {bindings.map(([key, label]) => (
              <Input key={key} label={t(label)} value={String(user.data?.[key] ?? '')} readOnly disabled />
            ))}
          </fieldset>
          <ResetSecondFactor userId={id} />
          <UserSubscriptions userId={id} />
          {error ? (
            <p role="alert" className="text-sm text-red-600">
              {error}
            </p>
          ) : null}
        </div>
      )}
      <QuotaAddDialog
        open={adding}
        onClose={() => setAdding(false)}
        onAdd={(delta) => {
          setForm((f) => (f ? { ...f, quota: String(Number(f.quota || 0) + delta) } : f));
          setAdding(false);
        }}
      />
    </SideSheet>
  );
}
