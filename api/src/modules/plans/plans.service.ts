import type { PlanInput, PlanView, SubscriptionViewWire } from '@turnpike/core/contracts/plans';
import { ALPHANUMERIC, randomString } from '@turnpike/core/crypto/random';
import {
  type SubscriptionOrder,
  type SubscriptionPlan,
  subscriptionOrders,
  subscriptionPlans,
  userSubscriptions,
  users,
} from '@turnpike/core/db/schema/index';
import type { User } from '@turnpike/core/db/schema/users';
import { PlanOrderStatus } from '@turnpike/core/domain/closed-sets';
import { AppError } from '@turnpike/core/errors';
import { type CreemEndpoint, createCreemCheckout, readCreemEvent } from '@turnpike/core/payment/creem';
import {
  buildEpayForm,
  EPAY_TRADE_SUCCESS,
  type EpayParams,
  epayTypeOf,
  verifyEpaySign,
} from '@turnpike/core/payment/epay';
import {
  createPlanCheckout,
  createStripeClient,
  readStripeEvent,
  type StripeEndpoint,
} from '@turnpike/core/payment/stripe';
import {
  cancelSubscription,
  completeOrder,
  expireOrder,
  expireSubscriptions,
  grantSubscription,
  listSubscriptions,
  type PaymentReport,
  type SubscriptionView,
} from '@turnpike/core/plans/subscriptions';
import { and, asc, count, eq } from 'drizzle-orm';
import type { AppDeps } from '../../deps.ts';

/** Where the payment providers' APIs are (their own by default); tests point them at local stand-ins. */
export interface PlanServiceOptions {
  readonly stripeEndpoint?: StripeEndpoint;
  readonly creemEndpoint?: CreemEndpoint;
}

export function toPlanView(plan: SubscriptionPlan): PlanView {
  return {
    id: plan.id,
    title: plan.title,
    subtitle: plan.subtitle,
    price_amount: plan.priceAmount,
    currency: plan.currency,
    duration_unit: plan.durationUnit,
    duration_value: plan.durationValue,
    custom_seconds: plan.customSeconds,
    enabled: plan.enabled,
    sort_order: plan.sortOrder,
    stripe_price_id: plan.stripePriceId,
    creem_product_id: plan.creemProductId,
    max_purchase_per_user: plan.maxPurchasePerUser,
    upgrade_group: plan.upgradeGroup,
    total_amount: plan.totalAmount,
    quota_reset_period: plan.quotaResetPeriod,
    quota_reset_custom_seconds: plan.quotaResetCustomSeconds,
    created_at: plan.createdAt,
    updated_at: plan.updatedAt,
  };
}

const planColumns = (input: PlanInput) => ({
  title: input.title,
  subtitle: input.subtitle,
  priceAmount: input.price_amount,
  currency: input.currency,
  durationUnit: input.duration_unit,
  durationValue: input.duration_value,
  customSeconds: input.custom_seconds,
  enabled: input.enabled,
  sortOrder: input.sort_order,
  stripePriceId: input.stripe_price_id,
  creemProductId: input.creem_product_id,
  maxPurchasePerUser: input.max_purchase_per_user,
  upgradeGroup: input.upgrade_group,
  totalAmount: input.total_amount,
  quotaResetPeriod: input.quota_reset_period,
  quotaResetCustomSeconds: input.quota_reset_custom_seconds,
});

/** Plans, their purchase through Epay, Stripe and Creem, the providers' callbacks, and the end of subscriptions. */
export function createPlanService(deps: AppDeps, options: PlanServiceOptions = {}) {
  const o = deps.options;
  const now = () => deps.now?.() ?? Math.floor(Date.now() / 1000);
  const changed = async (ids: readonly number[]) => {
    if (ids.length > 0) await deps.bus.publish({ type: 'users.changed', ids: [...ids] });
  };

  async function planOf(id: number): Promise<SubscriptionPlan> {
    const [plan] = await deps.db
      .select()
      .from(subscriptionPlans)
      .where(eq(subscriptionPlans.id, id))
      .limit(1);
    if (!plan) throw new AppError('NOT_FOUND', 'no such plan');
    return plan;
  }

  /** A plan the user may buy now: enabled, and under its limit of purchases per user. */
  async function buyablePlan(user: User, id: number): Promise<SubscriptionPlan> {
    const plan = await planOf(id);
    if (!plan.enabled) throw new AppError('VALIDATION_FAILED', 'this plan is not on sale');
    if (plan.maxPurchasePerUser > 0) {
      const [held] = await deps.db
        .select({ n: count() })
        .from(userSubscriptions)
        .where(and(eq(userSubscriptions.userId, user.id), eq(userSubscriptions.planId, plan.id)));
      if ((held?.n ?? 0) >= plan.maxPurchasePerUser)
        throw new AppError(
          'VALIDATION_FAILED',
          'you have bought this plan as many times as it may be bought',
        );
    }
    return plan;
  }

  /** A pending order for `plan`, its trade number unique (`SUB<user>NO<random><time>`). */
  async function openOrder(
    user: User,
    plan: SubscriptionPlan,
    paymentMethod: string,
  ): Promise<SubscriptionOrder> {
    const at = now();
    const tradeNo = `SUB${user.id}NO${randomString(8, ALPHANUMERIC)}${at}`;
    const [order] = await deps.db
      .insert(subscriptionOrders)
      .values({
        userId: user.id,
        planId: plan.id,
        money: plan.priceAmount,
        currency: plan.currency,
        tradeNo,
        paymentMethod,
        status: PlanOrderStatus.Pending,
        createTime: at,
      })
      .returning();
    return order as SubscriptionOrder;
  }

  /**
   * Opens an order and the provider's checkout for it, keeping the provider's id on the order; a provider that does
   * not answer ends the order (nothing can pay it) and the buyer is told to try again.
   */
  async function checkoutFor(
    user: User,
    plan: SubscriptionPlan,
    provider: 'stripe' | 'creem',
    open: (order: SubscriptionOrder) => Promise<{ readonly id: string; readonly url: string }>,
  ): Promise<{ readonly id: string; readonly url: string }> {
    const order = await openOrder(user, plan, provider);
    try {
      const checkout = await open(order);
      await deps.db
        .update(subscriptionOrders)
        .set({ providerRef: checkout.id })
        .where(eq(subscriptionOrders.id, order.id));
      return checkout;
    } catch (error) {
      await expireOrder(deps.db, order.tradeNo, now());
      const name = provider === 'stripe' ? 'Stripe' : 'Creem';
      throw new AppError('UPSTREAM_FAILED', `${name} did not open a checkout; try again later`, {
        cause: error,
      });
    }
  }

  const serverAddress = () => {
    const base = o.get('ServerAddress') || o.get('CustomCallbackAddress');
    if (!base)
      throw new AppError(
        'FEATURE_DISABLED',
        'the server address is not set; ask the administrator to set it',
      );
    return base.replace(/\/+$/, '');
  };

  /** Completes an order a provider reported paid; tells the relay the buyer's allowance changed. */
  async function complete(tradeNo: string, report: PaymentReport): Promise<'done' | 'again' | 'refused'> {
    const result = await completeOrder(deps.db, tradeNo, report, now());
    if (!result.ok) return 'refused';
    if (result.done) await changed([result.order.userId]);
    return result.done ? 'done' : 'again';
  }

  return {
    /** The plans on sale, in their order (`GET /api/subscription/plans`), each wrapped as the reference does. */
    async listOnSale(): Promise<{ plan: PlanView }[]> {
      const rows = await deps.db
        .select()
        .from(subscriptionPlans)
        .where(eq(subscriptionPlans.enabled, true))
        .orderBy(asc(subscriptionPlans.sortOrder), asc(subscriptionPlans.id));
      return rows.map((plan) => ({ plan: toPlanView(plan) }));
    },

    async listAll(): Promise<{ plan: PlanView }[]> {
      const rows = await deps.db
        .select()
        .from(subscriptionPlans)
        .orderBy(asc(subscriptionPlans.sortOrder), asc(subscriptionPlans.id));
      return rows.map((plan) => ({ plan: toPlanView(plan) }));
    },

    async create(input: PlanInput): Promise<PlanView> {
      const at = now();
      const [plan] = await deps.db
        .insert(subscriptionPlans)
        .values({ ...planColumns(input), createdAt: at, updatedAt: at })
        .returning();
      return toPlanView(plan as SubscriptionPlan);
    },

    /** Changes a plan for the next buyers; subscriptions already sold keep the terms they were sold with. */
    async update(id: number, input: PlanInput): Promise<PlanView> {
      const [plan] = await deps.db
        .update(subscriptionPlans)
        .set({ ...planColumns(input), updatedAt: now() })
        .where(eq(subscriptionPlans.id, id))
        .returning();
      if (!plan) throw new AppError('NOT_FOUND', 'no such plan');
      return toPlanView(plan);
    },

    async setEnabled(id: number, enabled: boolean): Promise<PlanView> {
      const [plan] = await deps.db
        .update(subscriptionPlans)
        .set({ enabled, updatedAt: now() })
        .where(eq(subscriptionPlans.id, id))
        .returning();
      if (!plan) throw new AppError('NOT_FOUND', 'no such plan');
      return toPlanView(plan);
    },

    /** A user's subscriptions with their allowances' use (`activeOnly`: those running now). */
    async subscriptionsOf(userId: number, activeOnly: boolean): Promise<SubscriptionViewWire[]> {
      const views = await listSubscriptions(deps.db, userId, now(), o.get('QuotaWindowTimeZone'), activeOnly);
      const titles = new Map<number, string>();
      for (const plan of await deps.db
        .select({ id: subscriptionPlans.id, title: subscriptionPlans.title })
        .from(subscriptionPlans))
        titles.set(plan.id, plan.title);
      return views.map((view) => toWire(view, titles.get(view.subscription.planId) ?? ''));
    },

    /** An administrator gives a user a plan without payment. */
    async grant(userId: number, planId: number): Promise<SubscriptionViewWire> {
      const plan = await planOf(planId);
      const [user] = await deps.db.select({ id: users.id }).from(users).where(eq(users.id, userId)).limit(1);
      if (!user) throw new AppError('NOT_FOUND', 'no such user');
      const granted = await deps.db.transaction((tx) => grantSubscription(tx, userId, plan, 'admin', now()));
      await changed([userId]);
      return toWire(
        { subscription: granted, amountUsed: 0, lastResetTime: granted.startTime, nextResetTime: 0 },
        plan.title,
      );
    },

    async cancel(id: number): Promise<void> {
      const userId = await cancelSubscription(deps.db, id, now());
      if (userId === undefined) throw new AppError('NOT_FOUND', 'no active subscription with this id');
      await changed([userId]);
    },

    /** Expires the subscriptions whose term is over; safe on every replica at once. */
    async expireDue(): Promise<number> {
      const ids = await expireSubscriptions(deps.db, now());
      await changed(ids);
      return ids.length;
    },

    // ---- Epay ----

    async payEpay(user: User, planId: number, method: string): Promise<{ url: string; params: EpayParams }> {
      if (!(o.get('PayAddress') && o.get('EpayId') && o.getText('EpayKey')))
        throw new AppError('FEATURE_DISABLED', 'admin has not enabled online top-up!');
      const plan = await buyablePlan(user, planId);
      if (plan.priceAmount < 0.01) throw new AppError('VALIDATION_FAILED', 'the amount to pay is too small');
      const base = serverAddress();
      const order = await openOrder(user, plan, epayTypeOf(method));
      return buildEpayForm({
        payAddress: o.get('PayAddress'),
        pid: o.get('EpayId'),
        key: o.getText('EpayKey'),
        type: order.paymentMethod,
        outTradeNo: order.tradeNo,
        notifyUrl: `${(o.get('CustomCallbackAddress') || base).replace(/\/+$/, '')}/api/subscription/epay/notify`,
        returnUrl: `${base}/topup`,
        name: `SUB${plan.id}`,
        money: order.money,
      });
    },

    /** Epay's notify for a plan order: 'success' once genuine (Epay stops retrying), the order completed once. */
    async notifyEpay(params: EpayParams): Promise<'success' | 'fail'> {
      const key = o.getText('EpayKey');
      if (!key || !verifyEpaySign(params, key)) return 'fail';
      if (params.pid !== undefined && params.pid !== o.get('EpayId')) return 'fail';
      if (params.trade_status !== EPAY_TRADE_SUCCESS) return 'success';
      const tradeNo = params.out_trade_no ?? '';
      const [order] = await deps.db
        .select()
        .from(subscriptionOrders)
        .where(eq(subscriptionOrders.tradeNo, tradeNo))
        .limit(1);
      if (!order) return 'fail';
      const outcome = await complete(tradeNo, {
        money: params.money === undefined ? order.money : Number(params.money),
        currency: order.currency,
        providerRef: params.trade_no ?? '',
        payload: '',
      });
      return outcome === 'refused' ? 'fail' : 'success';
    },

    // ---- Stripe ----

    /** Opens a Stripe Checkout for a plan; answers the page to send the buyer to. */
    async payStripe(user: User, planId: number): Promise<{ pay_link: string }> {
      const secret = o.getText('StripeApiSecret');
      if (!secret || !o.getText('StripeWebhookSecret'))
        throw new AppError('FEATURE_DISABLED', 'the administrator has not set up Stripe');
      const plan = await buyablePlan(user, planId);
      if (!plan.stripePriceId && plan.priceAmount <= 0)
        throw new AppError('VALIDATION_FAILED', 'the amount to pay is too small');
      const base = serverAddress();
      const checkout = await checkoutFor(user, plan, 'stripe', (order) =>
        createPlanCheckout(createStripeClient(secret, options.stripeEndpoint), {
          tradeNo: order.tradeNo,
          title: plan.title,
          money: order.money,
          currency: order.currency,
          stripePriceId: plan.stripePriceId,
          successUrl: `${base}/topup?plan_order=${order.tradeNo}`,
          cancelUrl: `${base}/topup`,
          ...(user.email ? { email: user.email } : {}),
        }),
      );
      return { pay_link: checkout.url };
    },

    /**
     * Stripe's webhook: a forged, altered or stale signature is refused (400) and changes nothing; a paid session
     * completes its order once, however often Stripe sends it.
     */
    async stripeWebhook(rawBody: Buffer, signature: string): Promise<'ok' | 'forged' | 'refused'> {
      const secret = o.getText('StripeWebhookSecret');
      if (!secret || !signature) return 'forged';
      let event: ReturnType<typeof readStripeEvent>;
      try {
        event = readStripeEvent(rawBody, signature, secret);
      } catch {
        return 'forged';
      }
      if (event.kind === 'expired') await expireOrder(deps.db, event.tradeNo, now());
      if (event.kind !== 'paid') return 'ok';
      const outcome = await complete(event.tradeNo, {
        money: event.money,
        currency: event.currency,
        providerRef: event.sessionId,
        payload: rawBody.toString('utf8').slice(0, 4000),
      });
      return outcome === 'refused' ? 'refused' : 'ok';
    },

    // ---- Creem ----

    async payCreem(user: User, planId: number): Promise<{ checkout_url: string }> {
      const apiKey = o.getText('CreemApiKey');
      if (!apiKey || !o.getText('CreemWebhookSecret'))
        throw new AppError('FEATURE_DISABLED', 'the administrator has not set up Creem');
      const plan = await buyablePlan(user, planId);
      if (!plan.creemProductId)
        throw new AppError('VALIDATION_FAILED', 'this plan is not sold through Creem');
      const base = serverAddress();
      const checkout = await checkoutFor(user, plan, 'creem', (order) =>
        createCreemCheckout(
          {
            apiKey,
            testMode: o.get('CreemTestMode'),
            ...(options.creemEndpoint ? { endpoint: options.creemEndpoint } : {}),
          },
          {
            productId: plan.creemProductId,
            requestId: order.tradeNo,
            successUrl: `${base}/topup?plan_order=${order.tradeNo}`,
            ...(user.email ? { email: user.email } : {}),
          },
        ),
      );
      return { checkout_url: checkout.url };
    },

    async creemWebhook(rawBody: Buffer, signature: string): Promise<'ok' | 'forged' | 'refused'> {
      const secret = o.getText('CreemWebhookSecret');
      if (!secret || !signature) return 'forged';
      const event = readCreemEvent(rawBody, signature, secret);
      if (event.kind === 'forged') return 'forged';
      if (event.kind !== 'paid') return 'ok';
      const outcome = await complete(event.tradeNo, {
        money: event.money,
        currency: event.currency,
        providerRef: event.orderId,
        payload: rawBody.toString('utf8').slice(0, 4000),
      });
      return outcome === 'refused' ? 'refused' : 'ok';
    },
  };
}

export type PlanService = ReturnType<typeof createPlanService>;

function toWire(view: SubscriptionView, planTitle: string): SubscriptionViewWire {
  const s = view.subscription;
  return {
    id: s.id,
    user_id: s.userId,
    plan_id: s.planId,
    plan_title: planTitle,
    amount_total: s.amountTotal,
    amount_used: view.amountUsed,
    start_time: s.startTime,
    end_time: s.endTime,
    status: s.status,
    source: s.source,
    last_reset_time: view.lastResetTime,
    next_reset_time: view.nextResetTime,
    upgrade_group: s.upgradeGroup,
    prev_user_group: s.prevUserGroup,
    quota_reset_period: s.quotaResetPeriod,
  };
}
