import type { PayRequest, TopUpAmount } from '@turnpike/core/contracts/wallet';
import { TopUpStatus } from '@turnpike/core/contracts/wallet';
import { ALPHANUMERIC, randomString } from '@turnpike/core/crypto/random';
import type { User } from '@turnpike/core/db/schema/users';
import { LogType } from '@turnpike/core/domain/logs';
import { AppError } from '@turnpike/core/errors';
import {
  minimumAmount,
  payableMoney,
  quotaOfUnits,
  type TopUpPricing,
  unitsOf,
} from '@turnpike/core/payment/amount';
import {
  buildEpayForm,
  EPAY_TRADE_SUCCESS,
  type EpayParams,
  epayTypeOf,
  verifyEpaySign,
} from '@turnpike/core/payment/epay';
import { createLogRepo, nowSeconds } from '@turnpike/core/repos/log.repo';
import { createRedemptionRepo } from '@turnpike/core/repos/redemption.repo';
import { createTopUpRepo } from '@turnpike/core/repos/top-up.repo';
import { createUserRepo } from '@turnpike/core/repos/user.repo';
import type { AppDeps } from '../../deps.ts';
import { formatQuota } from '../../http/quota-text.ts';

/** Redemption codes and online (Epay) top-ups of the signed-in user, and Epay's callback. */
export function createWalletService(deps: AppDeps) {
  const o = deps.options;
  const changed = (id: number) => deps.bus.publish({ type: 'users.changed', ids: [id] });

  function pricingFor(user: User): TopUpPricing {
    return {
      price: o.get('Price'),
      groupRatio: o.get('TopupGroupRatio')[user.group] ?? 1,
      displayInCurrency: o.get('DisplayInCurrencyEnabled'),
      quotaPerUnit: o.get('QuotaPerUnit'),
      minTopUp: o.get('MinTopUp'),
    };
  }

  /** Units and money for an amount, refusing amounts below the minimum. */
  function quote(user: User, amount: number): { units: number; money: number } {
    const pricing = pricingFor(user);
    const min = minimumAmount(pricing);
    if (amount < min) throw new AppError('VALIDATION_FAILED', `top-up amount cannot be less than ${min}`);
    const units = unitsOf(amount, pricing);
    return { units, money: payableMoney(units, pricing) };
  }

  const isOnlineTopUpEnabled = () => Boolean(o.get('PayAddress') && o.get('EpayId') && o.getText('EpayKey'));

  return {
    /** Redeems a code exactly once: a conditional claim and the credit commit together or not at all. */
    async redeem(user: User, key: string): Promise<number> {
      const quotaPerUnit = o.get('QuotaPerUnit');
      const quota = await deps.db.transaction(async (tx) => {
        const code = await createRedemptionRepo(tx).claim(key, user.id, nowSeconds());
        if (!code) return undefined;
        await createUserRepo(tx).addQuota(user.id, code.quota);
        await createLogRepo(tx).insert({
          userId: user.id,
          username: user.username,
          type: LogType.TopUp,
          quota: code.quota,
          content: `redeemed a code: ${formatQuota(code.quota, quotaPerUnit)} added (code id ${code.id})`,
        });
        return code.quota;
      });
      if (quota === undefined)
        throw new AppError('VALIDATION_FAILED', 'this redemption code is invalid or has already been used');
      await changed(user.id);
      return quota;
    },

    /** The money to pay for `amount`, as text with two decimals. */
    amount(user: User, input: TopUpAmount): string {
      return quote(user, input.amount).money.toFixed(2);
    },

    /** Creates a pending order and answers the signed Epay form the browser submits. */
    async pay(user: User, input: PayRequest): Promise<{ url: string; params: EpayParams }> {
      if (!isOnlineTopUpEnabled())
        throw new AppError('FEATURE_DISABLED', 'admin has not enabled online top-up!');
      const { units, money } = quote(user, input.amount);
      if (money < 0.01) throw new AppError('VALIDATION_FAILED', 'the amount to pay is too small');
      const callbackBase = o.get('CustomCallbackAddress') || o.get('ServerAddress');
      if (!callbackBase)
        throw new AppError(
          'FEATURE_DISABLED',
          'the server address is not set; ask the administrator to set it',
        );
      const now = nowSeconds();
      const tradeNo = `USR${user.id}NO${randomString(6, ALPHANUMERIC)}${now}`;
      const type = epayTypeOf(input.payment_method);
      await createTopUpRepo(deps.db).insert({
        userId: user.id,
        amount: units,
        money,
        tradeNo,
        paymentMethod: type,
        createTime: now,
        status: TopUpStatus.Pending,
      });
      return buildEpayForm({
        payAddress: o.get('PayAddress'),
        pid: o.get('EpayId'),
        key: o.getText('EpayKey'),
        type,
        outTradeNo: tradeNo,
        notifyUrl: `${callbackBase.replace(/\/+$/, '')}/api/user/epay/notify`,
        returnUrl: `${(o.get('ServerAddress') || callbackBase).replace(/\/+$/, '')}/log`,
        name: `TUC${units}`,
        money,
      });
    },

    /**
     * Epay's notify call. Answers 'success' once the call is genuine (so Epay stops retrying) and 'fail' otherwise;
     * credits the order at most once, however often the call repeats.
     */
    async notify(params: EpayParams): Promise<'success' | 'fail'> {
      const key = o.getText('EpayKey');
      if (!key || !verifyEpaySign(params, key)) return 'fail';
      if (params.pid !== undefined && params.pid !== o.get('EpayId')) return 'fail';
      if (params.trade_status !== EPAY_TRADE_SUCCESS) return 'success';
      const tradeNo = params.out_trade_no ?? '';
      const order = await createTopUpRepo(deps.db).findByTradeNo(tradeNo);
      if (!order) return 'fail';
      // The money Epay reports must be what the order asked for; a mismatch is never credited.
      if (params.money !== undefined && Math.abs(Number(params.money) - order.money) >= 0.005) return 'fail';
      const quotaPerUnit = o.get('QuotaPerUnit');
      const credited = await deps.db.transaction(async (tx) => {
        const done = await createTopUpRepo(tx).complete(tradeNo, nowSeconds());
        if (!done) return undefined;
        const quota = quotaOfUnits(done.amount, quotaPerUnit);
        const user = await createUserRepo(tx).addQuota(done.userId, quota);
        await createLogRepo(tx).insert({
          userId: done.userId,
          username: user?.username ?? '',
          type: LogType.TopUp,
          quota,
          content: `online top-up succeeded: ${formatQuota(quota, quotaPerUnit)} added, paid ${done.money.toFixed(2)} (order ${done.tradeNo})`,
        });
        return done;
      });
      if (credited) await changed(credited.userId);
      return 'success';
    },
  };
}
