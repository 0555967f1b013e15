import type { PlanInput, PlanView, SubscriptionViewWire } from '@turnpike/core/contracts/plans';
import { api } from '../../../lib/api.ts';

export type { PlanView, SubscriptionViewWire };

export const plansQueryKey = ['plans'] as const;
export const mySubscriptionsQueryKey = ['subscriptions', 'self'] as const;
export const adminPlansQueryKey = ['plans', 'admin'] as const;
export const userSubscriptionsQueryKey = (userId: number) => ['subscriptions', 'user', userId] as const;

/** The plans on sale (`GET /api/subscription/plans`). */
export const fetchPlansOnSale = async () =>
  (await api.get<{ plan: PlanView }[]>('/api/subscription/plans', { silent: true })).map((row) => row.plan);

/** The caller's subscriptions and their allowances' use (`GET /api/subscription/self`). */
export const fetchMySubscriptions = async () => {
  const data = await api.get<{ subscriptions: { subscription: SubscriptionViewWire }[] }>(
    '/api/subscription/self',
  );
  return data.subscriptions.map((row) => row.subscription);
};

/** Opens a checkout: Stripe answers `pay_link`, Creem `checkout_url`; the browser is sent there. */
export const payWithStripe = (planId: number) =>
  api.post<{ pay_link: string }>('/api/subscription/stripe/pay', { plan_id: planId });
export const payWithCreem = (planId: number) =>
  api.post<{ checkout_url: string }>('/api/subscription/creem/pay', { plan_id: planId });

export const fetchAdminPlans = async () =>
  (await api.get<{ plan: PlanView }[]>('/api/subscription/admin/plans', { silent: true })).map(
    (row) => row.plan,
  );

/** The plan form's fields as the API takes them (`{ plan: {...} }`). */
export type PlanDraft = Omit<PlanInput, 'currency'> & { currency: string };

export const createPlan = (plan: PlanDraft) => api.post<PlanView>('/api/subscription/admin/plans', { plan });
export const updatePlan = (id: number, plan: PlanDraft) =>
  api.put<PlanView>(`/api/subscription/admin/plans/${id}`, { plan });

export const fetchUserSubscriptions = async (userId: number) =>
  (
    await api.get<{ subscription: SubscriptionViewWire }[]>(
      `/api/subscription/admin/users/${userId}/subscriptions`,
    )
  ).map((row) => row.subscription);
export const grantPlan = (userId: number, planId: number) =>
  api.post<SubscriptionViewWire>(`/api/subscription/admin/users/${userId}/subscriptions`, {
    plan_id: planId,
  });
export const cancelSubscription = (id: number) =>
  api.post(`/api/subscription/admin/user_subscriptions/${id}/invalidate`);
