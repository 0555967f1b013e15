import { useQuery, useQueryClient } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { type ReactNode, useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import {
  Button,
  ConfirmDialog,
  Input,
  PageSpinner,
  Select,
  Switch,
  Tag,
} from '../../../components/ui/index.ts';
import { useCopy } from '../../../components/ui/use-copy.tsx';
import { formatQuota } from '../../../lib/format.ts';
import { useStatus } from '../../../lib/status.ts';
import { toast } from '../../../lib/toast.ts';
import {
  fetchAffCode,
  fetchSelf,
  generateAccessToken,
  type NotifySetting,
  parseSetting,
  type SelfUser,
  saveNotifySetting,
  selfQueryKey,
} from '../api/self.ts';
import { THRESHOLD_PRESETS, validateNotification } from '../validation.ts';
import { BindingList } from './bindings.tsx';
import { PasskeySection } from './passkey-section.tsx';
import {
  BindEmailDialog,
  ChangePasswordDialog,
  DeleteAccountDialog,
  TransferDialog,
} from './personal-dialogs.tsx';
import { PriceInfo } from './price-tab.tsx';
import { TwoFactorSection } from './two-factor-card.tsx';

function Card({ title, children }: { title: string; children: ReactNode }) {
  return (
    <section
      aria-label={title}
      className="rounded-lg border border-gray-200 bg-white p-4 dark:border-gray-700 dark:bg-gray-900"
    >
      <h2 className="mb-3 text-base font-semibold">{title}</h2>
      {children}
    </section>
  );
}

type Dialog = 'transfer' | 'email' | 'password' | 'delete' | 'token' | null;

/** The notification and price tabs: one PUT /api/user/setting for both. */
function NotificationTabs({ user, quotaPerUnit }: { user: SelfUser; quotaPerUnit: number }) {
  const { t } = useTranslation('users');
  const queryClient = useQueryClient();
  const [tab, setTab] = useState<'notify' | 'price'>('notify');
  const [setting, setSetting] = useState<NotifySetting>(() => parseSetting(user.setting));
  const [threshold, setThreshold] = useState(String(setting.quota_warning_threshold));
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const save = async () => {
    const problem = validateNotification({
      notifyType: setting.notify_type,
      threshold,
      webhookUrl: setting.webhook_url,
      email: setting.notification_email,
    });
    setError(problem ? t(problem) : null);
    if (problem) return;
    setBusy(true);
    try {
      const { has_webhook_secret: _has, ...body } = setting;
      await saveNotifySetting({ ...body, quota_warning_threshold: Number(threshold) });
      toast.success(t('personal.notify.saved'));
      await queryClient.invalidateQueries({ queryKey: selfQueryKey });
    } catch {
      toast.error(t('personal.notify.failed'));
    } finally {
      setBusy(false);
    }
  };

  return (
    <Card title={t('personal.settingsCard')}>
      <div role="tablist" className="mb-3 flex gap-2 border-b dark:border-gray-700">
        {(['notify', 'price'] as const).map((id) => (
          <button
            key={id}
            type="button"
            role="tab"
            aria-selected={tab === id}
            className={`px-3 py-2 text-sm ${tab === id ? 'border-b-2 border-blue-600 font-medium' : ''}`}
            onClick={() => setTab(id)}
          >
            {t(`personal.tab.${id}`)}
          </button>
        ))}
      </div>
      {tab === 'notify' ? (
        <div className="flex flex-col gap-3">
          <Select
            label={t('personal.notify.type')}
            value={setting.notify_type}
            options={[
              { value: 'email', label: t('personal.notify.email') },
              { value: 'webhook', label: t('personal.notify.webhook') },
            ]}
            onChange={(e) =>
              setSetting({ ...setting, notify_type: e.target.value as NotifySetting['notify_type'] })
            }
          />
          <Input
            label={t('personal.notify.threshold')}
            type="number"
            value={threshold}
            hint={t('personal.notify.thresholdHint', {
              money: formatQuota(Number(threshold) || 0, { quotaPerUnit }),
            })}
            onChange={(e) => setThreshold(e.target.value)}
          />
          <div className="flex flex-wrap gap-1">
            {THRESHOLD_PRESETS.map((p) => (
              <Button key={p} size="sm" variant="secondary" onClick={() => setThreshold(String(p))}>
                {`${p.toLocaleString('en-US')} (${formatQuota(p, { quotaPerUnit })})`}
              </Button>
            ))}
          </div>
          {setting.notify_type === 'webhook' ? (
            <>
              <Input
                label={t('personal.notify.webhookUrl')}
                value={setting.webhook_url}
                hint={t('personal.notify.webhookHint')}
                onChange={(e) => setSetting({ ...setting, webhook_url: e.target.value })}
              />
              <Input
                label={t('personal.notify.webhookSecret')}
                type="password"
                autoComplete="new-password"
                placeholder={setting.has_webhook_secret ? t('personal.notify.secretKept') : ''}
                value={setting.webhook_secret}
                onChange={(e) => setSetting({ ...setting, webhook_secret: e.target.value })}
              />
            </>
          ) : (
            <Input
              label={t('personal.notify.notificationEmail')}
              type="email"
              value={setting.notification_email}
              hint={t('personal.notify.emailHint')}
              onChange={(e) => setSetting({ ...setting, notification_email: e.target.value })}
            />
          )}
        </div>
      ) : (
        <div className="flex flex-col gap-2">
          <Switch
            label={t('personal.price.acceptUnset')}
            checked={setting.accept_unset_model_ratio_model}
            onChange={(on) => setSetting({ ...setting, accept_unset_model_ratio_model: on })}
          />
          <p className="text-xs text-gray-500">{t('personal.price.acceptUnsetHint')}</p>
          <PriceInfo group={user.group} />
        </div>
      )}
      {error ? (
        <p role="alert" className="mt-2 text-sm text-red-600">
          {error}
        </p>
      ) : null}
      <Button className="mt-3" loading={busy} onClick={() => void save()}>
        {t('personal.notify.save')}
      </Button>
    </Card>
  );
}

/** /personal: balance, invite, bindings, notification and price settings, security actions. */
export function PersonalPage() {
  const { t } = useTranslation('users');
  const queryClient = useQueryClient();
  const status = useStatus();
  const self = useQuery({ queryKey: selfQueryKey, queryFn: fetchSelf });
  const [affCode, setAffCode] = useState('');
  const [token, setToken] = useState<string | null>(null);
  const [dialog, setDialog] = useState<Dialog>(null);
  const [tokenBusy, setTokenBusy] = useState(false);
  const { copy, dialog: copyDialog } = useCopy();
  const { t: tp } = useTranslation('personal');

  /** The server replaces the old token; the user confirmed that first. */
  const regenerateToken = async () => {
    setTokenBusy(true);
    try {
      const fresh = await generateAccessToken();
      setToken(fresh);
      setDialog(null);
      await copy(fresh);
    } catch {
      // shown by the request client
    } finally {
      setTokenBusy(false);
    }
  };
  const quotaPerUnit = status.data?.quota_per_unit ?? 500000;
  const display = { quotaPerUnit, inCurrency: status.data?.display_in_currency ?? true };

  useEffect(() => {
    if (!self.data) return;
    if (self.data.aff_code) setAffCode(self.data.aff_code);
    else fetchAffCode().then(setAffCode, () => {});
  }, [self.data]);

  if (self.isPending) return <PageSpinner />;
  if (!self.data) return <p role="alert">{t('personal.loadFailed')}</p>;
  const user = self.data;
  const refresh = () => void queryClient.invalidateQueries({ queryKey: selfQueryKey });
  const inviteLink = affCode ? `${window.location.origin}/register?aff=${affCode}` : '';

  return (
    <section className="flex flex-col gap-4">
      <h1 className="text-xl font-semibold">{t('personal.title')}</h1>
      <div className="grid gap-4 md:grid-cols-2">
        <Card title={t('personal.balance.title')}>
          <dl className="grid grid-cols-2 gap-2 text-sm">
            <dt className="text-gray-500">{t('personal.balance.current')}</dt>
            <dd data-testid="balance">{formatQuota(user.quota, display)}</dd>
            <dt className="text-gray-500">{t('personal.balance.used')}</dt>
            <dd>{formatQuota(user.used_quota, display)}</dd>
            <dt className="text-gray-500">{t('personal.balance.requests')}</dt>
            <dd>{user.request_count}</dd>
            <dt className="text-gray-500">{t('personal.balance.group')}</dt>
            <dd>
              <Tag>{user.group}</Tag>
            </dd>
          </dl>
        </Card>
        <Card title={t('personal.invite.title')}>
          <div className="flex flex-col gap-2 text-sm">
            <div className="flex items-end gap-2">
              <div className="flex-1">
                <Input label={t('personal.invite.link')} value={inviteLink} readOnly />
              </div>
              <Button variant="secondary" disabled={!inviteLink} onClick={() => void copy(inviteLink)}>
                {t('personal.copy')}
              </Button>
            </div>
            <p>
              {t('personal.invite.pending')}: {formatQuota(user.aff_quota, display)} ·{' '}
              {t('personal.invite.total')}: {formatQuota(user.aff_history_quota, display)} ·{' '}
              {t('personal.invite.count')}: {user.aff_count}
            </p>
            <Button variant="secondary" onClick={() => setDialog('transfer')}>
              {t('personal.transfer.open')}
            </Button>
          </div>
        </Card>
      </div>
      <Card title={t('personal.binding.title')}>
        <BindingList
          user={user}
          status={status.data}
          onBindEmail={() => setDialog('email')}
          onBound={refresh}
        />
      </Card>
      <NotificationTabs user={user} quotaPerUnit={quotaPerUnit} />
      <Card title={tp('two-factor:cardTitle')}>
        <div className="flex flex-col gap-6">
          <TwoFactorSection />
          <PasskeySection />
        </div>
      </Card>
      <Card title={t('personal.security.title')}>
        <div className="flex flex-col gap-3">
          <div className="flex flex-wrap gap-2">
            <Link
              to="/user/edit"
              className="inline-flex items-center rounded-md border border-gray-300 bg-white px-3 py-2 text-sm text-gray-800 hover:bg-gray-50 dark:border-gray-600 dark:bg-gray-800 dark:text-gray-100 dark:hover:bg-gray-700"
            >
              {t('personal.selfEdit.open')}
            </Link>
            <Button variant="secondary" onClick={() => setDialog('token')}>
              {t('personal.token.generate')}
            </Button>
            <Button variant="secondary" onClick={() => setDialog('password')}>
              {t('personal.password.open')}
            </Button>
            <Button variant="danger" onClick={() => setDialog('delete')}>
              {t('personal.delete.open')}
            </Button>
          </div>
          {token ? (
            <Input label={t('personal.token.label')} value={token} readOnly hint={t('personal.token.hint')} />
          ) : null}
        </div>
      </Card>
      <TransferDialog
        open={dialog === 'transfer'}
        onClose={() => setDialog(null)}
        available={user.aff_quota}
        quotaPerUnit={quotaPerUnit}
        onDone={refresh}
      />
      <BindEmailDialog open={dialog === 'email'} onClose={() => setDialog(null)} onDone={refresh} />
      <ChangePasswordDialog open={dialog === 'password'} onClose={() => setDialog(null)} />
      <DeleteAccountDialog
        open={dialog === 'delete'}
        onClose={() => setDialog(null)}
        username={user.username}
      />
      <ConfirmDialog
        open={dialog === 'token'}
        title={tp('token.confirmTitle')}
        message={tp('token.confirmMessage')}
        confirmText={tp('token.confirm')}
        loading={tokenBusy}
        onCancel={() => setDialog(null)}
        onConfirm={() => void regenerateToken()}
      />
      {copyDialog}
    </section>
  );
}
