import { useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, type ReactNode, useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Button, DialogFooter, Input, Modal, Spinner } from '../../../components/ui/index.ts';
import { ApiError } from '../../../lib/api.ts';
import { formatNumber, formatQuota } from '../../../lib/format.ts';
import { useStatus } from '../../../lib/status.ts';
import { toast } from '../../../lib/toast.ts';
import { CheckinCard } from '../../checkin/components/checkin-card.tsx';
import { PlansCard } from '../../plans/components/plans-card.tsx';
import { WalletWindows } from '../../quota-windows/components/wallet-windows.tsx';
import {
  fetchPayable,
  fetchSelf,
  type PaymentMethod,
  redeemCode,
  requestPay,
  selfQueryKey,
} from '../api/wallet.ts';
import { openPaymentWindow, submitPayForm } from '../pay-form.ts';
import {
  checkAmount,
  checkCode,
  creditedQuota,
  minimumTopUp,
  parseAmount,
  type TopUpSettings,
} from '../validation.ts';

/** How long typing must pause before the payable amount is asked for. */
const PAYABLE_DELAY_MS = 400;

function Card({ title, children }: { title: ReactNode; children: ReactNode }) {
  return (
    <section className="rounded-lg border border-gray-200 bg-white p-4 dark:border-gray-700 dark:bg-gray-900">
      <h2 className="mb-3 text-base font-semibold">{title}</h2>
      {children}
    </section>
  );
}

/** The value of `value`, once it has stopped changing for `delay` ms. */
function useSettled<T>(value: T, delay: number): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), delay);
    return () => clearTimeout(timer);
  }, [value, delay]);
  return settled;
}

/** The signed-in user's balance, redeeming a code, and online top-up through Epay (Alipay or WeChat). */
export function WalletPage() {
  const { t } = useTranslation('wallet');
  const status = useStatus();
  const queryClient = useQueryClient();
  const self = useQuery({ queryKey: selfQueryKey, queryFn: fetchSelf });

  const settings: TopUpSettings = {
    min_topup: status.data?.min_topup ?? 1,
    display_in_currency: status.data?.display_in_currency ?? true,
    quota_per_unit: status.data?.quota_per_unit ?? 500000,
  };
  const display = { quotaPerUnit: settings.quota_per_unit, inCurrency: settings.display_in_currency };
  const onlineEnabled = Boolean(status.data?.enable_online_topup);
  const topUpLink = status.data?.top_up_link ?? '';
  const minimum = minimumTopUp(settings);

  // redeem a code
  const [code, setCode] = useState('');
  const [codeError, setCodeError] = useState<string | null>(null);
  const [redeeming, setRedeeming] = useState(false);

  const redeem = async (e: FormEvent) => {
    e.preventDefault();
    const problem = checkCode(code);
    if (problem) {
      setCodeError(t(problem));
      toast.warning(t(problem));
      return;
    }
    setRedeeming(true);
    try {
      const added = await redeemCode(code.trim());
      toast.success(t('redeem.done', { quota: formatQuota(added, display) }));
      setCode('');
      await queryClient.invalidateQueries({ queryKey: selfQueryKey });
    } catch (error) {
      const message = error instanceof ApiError && error.message ? error.message : t('error.requestFailed');
      setCodeError(message);
      toast.error(message);
    } finally {
      setRedeeming(false);
    }
  };

  const openTopUpLink = () => {
    if (!topUpLink) {
      toast.error(t('error.noTopUpLink'));
      return;
    }
    window.open(topUpLink, '_blank', 'noopener,noreferrer');
  };

  // online top-up
  const [amountText, setAmountText] = useState<string | null>(null);
  const text = amountText ?? String(minimum);
  const typed = parseAmount(text);
  const amountProblem = checkAmount(typed, minimum);
  const amountError = amountProblem ? t(amountProblem, { min: formatNumber(minimum) }) : null;
  const settledAmount = useSettled(typed, PAYABLE_DELAY_MS);
  const payableQuery = (amount: number) => ({
    queryKey: ['topup-payable', amount] as const,
    queryFn: ({ signal }: { signal: AbortSignal }) => fetchPayable(amount, signal),
    staleTime: 30_000,
  });
  const payable = useQuery({
    ...payableQuery(settledAmount),
    enabled: onlineEnabled && checkAmount(settledAmount, minimum) === null,
  });
  const [confirming, setConfirming] = useState<{
    method: PaymentMethod;
    amount: number;
    money: string;
  } | null>(null);
  const [preparing, setPreparing] = useState<PaymentMethod | null>(null);
  const [paying, setPaying] = useState(false);

  const startPay = async (method: PaymentMethod) => {
    if (!onlineEnabled) {
      toast.error(t('error.onlineDisabled'));
      return;
    }
    const amount = parseAmount(text);
    setAmountText(String(amount));
    const problem = checkAmount(amount, minimum);
    if (problem) {
      toast.error(t(problem, { min: formatNumber(minimum) }));
      return;
    }
    setPreparing(method);
    try {
      const money = await queryClient.fetchQuery(payableQuery(amount));
      setConfirming({ method, amount, money });
    } catch (error) {
      toast.error(error instanceof ApiError && error.message ? error.message : t('error.requestFailed'));
    } finally {
      setPreparing(null);
    }
  };

  const pay = async () => {
    if (!confirming) return;
    // opened now, inside the click, so the browser does not block it as a pop-up
    const popup = openPaymentWindow(t('pay.redirecting'));
    setPaying(true);
    try {
      const form = await requestPay(confirming.amount, confirming.method);
      submitPayForm(form, popup);
      toast.info(popup ? t('pay.opened') : t('pay.redirecting'));
      setConfirming(null);
    } catch (error) {
      popup?.close();
      toast.error(
        error instanceof ApiError && error.message && error.status !== 0
          ? error.message
          : t('error.requestFailed'),
      );
    } finally {
      setPaying(false);
    }
  };

  const methodName = (method: PaymentMethod) => (method === 'zfb' ? t('pay.alipay') : t('pay.wechat'));

  return (
    <div className="flex max-w-3xl flex-col gap-4">
      <h1 className="text-xl font-semibold">{t('title')}</h1>
      <CheckinCard />
      <PlansCard />

      <Card title={t('balance.title')}>
        {self.isLoading ? (
          <div className="text-blue-600">
            <Spinner />
          </div>
        ) : self.data ? (
          <dl className="grid grid-cols-1 gap-3 sm:grid-cols-3">
            <div>
              <dt className="text-sm text-gray-500 dark:text-gray-400">{t('balance.current')}</dt>
              <dd className="text-2xl font-semibold" data-testid="wallet-balance">
                {formatQuota(self.data.quota, display)}
              </dd>
            </div>
            <div>
              <dt className="text-sm text-gray-500 dark:text-gray-400">{t('balance.used')}</dt>
              <dd className="text-lg">{formatQuota(self.data.used_quota, display)}</dd>
            </div>
            <div>
              <dt className="text-sm text-gray-500 dark:text-gray-400">{t('balance.requests')}</dt>
              <dd className="text-lg">{formatNumber(self.data.request_count)}</dd>
            </div>
          </dl>
        ) : (
          <div className="flex flex-wrap items-center gap-2 text-sm text-red-600 dark:text-red-400">
            {t('balance.failed')}
            <Button size="sm" variant="secondary" onClick={() => void self.refetch()}>
              {t('balance.retry')}
            </Button>
          </div>
        )}
      </Card>

      {self.data ? <WalletWindows self={self.data} display={display} /> : null}

      <Card title={t('redeem.title')}>
        <form noValidate onSubmit={redeem} className="flex flex-col gap-3">
          <Input
            label={t('redeem.code')}
            placeholder={t('redeem.placeholder')}
            value={code}
            error={codeError}
            autoComplete="off"
            onChange={(e) => {
              setCode(e.target.value);
              setCodeError(null);
            }}
          />
          <div className="flex flex-wrap gap-2">
            <Button type="submit" loading={redeeming}>
              {t('redeem.submit')}
            </Button>
            <Button variant="secondary" onClick={openTopUpLink}>
              {t('redeem.buy')}
            </Button>
          </div>
        </form>
      </Card>

      <Card title={t('online.title')}>
        {onlineEnabled ? (
          <div className="flex flex-col gap-3">
            <Input
              label={settings.display_in_currency ? t('online.amountCurrency') : t('online.amountQuota')}
              inputMode="numeric"
              value={text}
              error={amountError}
              hint={t('online.minimum', { min: formatNumber(minimum) })}
              onChange={(e) => setAmountText(e.target.value)}
              onBlur={() => setAmountText(String(parseAmount(text)))}
            />
            {amountError ? null : (
              <p className="text-sm text-gray-600 dark:text-gray-300" aria-live="polite">
                {t('online.credited', { quota: formatQuota(creditedQuota(typed, settings), display) })}
                {' · '}
                {payable.isFetching || settledAmount !== typed ? (
                  <span>{t('online.payableLoading')}</span>
                ) : payable.data !== undefined ? (
                  <span data-testid="payable">{t('online.payable', { money: payable.data })}</span>
                ) : payable.isError ? (
                  <span className="text-red-600 dark:text-red-400">
                    {payable.error instanceof ApiError && payable.error.message
                      ? payable.error.message
                      : t('error.requestFailed')}
                  </span>
                ) : null}
              </p>
            )}
            <div className="flex flex-wrap gap-2">
              {(['zfb', 'wx'] as const).map((method) => (
                <Button
                  key={method}
                  loading={preparing === method}
                  disabled={preparing !== null}
                  onClick={() => void startPay(method)}
                >
                  {methodName(method)}
                </Button>
              ))}
            </div>
          </div>
        ) : (
          <p
            role="note"
            className="rounded bg-yellow-50 p-3 text-sm text-yellow-800 dark:bg-yellow-900/30 dark:text-yellow-200"
          >
            {t('error.onlineDisabled')}
          </p>
        )}
      </Card>

      <Modal
        open={confirming !== null}
        onClose={() => setConfirming(null)}
        size="sm"
        title={t('pay.confirmTitle')}
        footer={
          <DialogFooter
            onCancel={() => setConfirming(null)}
            onOk={() => void pay()}
            busy={paying}
            okText={t('pay.confirm')}
            cancelText={t('pay.cancel')}
          />
        }
      >
        {confirming ? (
          <dl className="grid grid-cols-[auto_1fr] gap-x-4 gap-y-1">
            <dt className="text-gray-500 dark:text-gray-400">{t('pay.amount')}</dt>
            <dd>
              {settings.display_in_currency
                ? formatQuota(creditedQuota(confirming.amount, settings), display)
                : formatNumber(confirming.amount)}
            </dd>
            <dt className="text-gray-500 dark:text-gray-400">{t('pay.toPay')}</dt>
            <dd>{t('online.money', { money: confirming.money })}</dd>
            <dt className="text-gray-500 dark:text-gray-400">{t('pay.method')}</dt>
            <dd>{methodName(confirming.method)}</dd>
          </dl>
        ) : null}
      </Modal>
    </div>
  );
}
