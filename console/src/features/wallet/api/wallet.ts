import { ApiError, api, requestEnvelope } from '../../../lib/api.ts';
import type { QuotaWindowStateView } from '../../quota-windows/rules.ts';

/** The part of GET /api/user/self the wallet shows. */
export interface WalletSelf {
  id: number;
  quota: number;
  used_quota: number;
  request_count: number;
  group?: string;
  /** What each of the user's budget windows, and their group's, has spent (absent from a server without them). */
  quota_window_states?: QuotaWindowStateView[];
  group_quota_window_states?: QuotaWindowStateView[];
}

/** The same key the personal page uses for /api/user/self, so a redeem refreshes the balance everywhere. */
export const selfQueryKey = ['self'] as const;
export const fetchSelf = () => api.get<WalletSelf>('/api/user/self');

/** Redeems a code; answers the quota added. Silent: the wallet shows the failure itself. */
export const redeemCode = (key: string) => api.post<number>('/api/user/topup', { key }, { silent: true });

/** Epay's payment methods as the console sends them. */
export type PaymentMethod = 'zfb' | 'wx';

/** The money to pay for `amount`, as text with two decimals. */
export const fetchPayable = (amount: number, signal?: AbortSignal) =>
  api.post<string>(
    '/api/user/amount',
    { amount, top_up_code: '' },
    { silent: true, ...(signal ? { signal } : {}) },
  );

/** The signed form the browser posts to the payment site. */
export interface PayForm {
  url: string;
  params: Record<string, string>;
}

/**
 * POST /api/user/pay. Its answer carries `url` beside `data` (the form fields), so the whole envelope is read;
 * failures throw ApiError without showing anything (the wallet shows them).
 */
export async function requestPay(amount: number, method: PaymentMethod): Promise<PayForm> {
  const envelope = await requestEnvelope<Record<string, string>, { url: string }>('POST', '/api/user/pay', {
    body: { amount, top_up_code: '', payment_method: method },
    silent: true,
  });
  if (typeof envelope.url !== 'string' || !envelope.data) throw new ApiError(envelope.message ?? '', 200);
  return { url: envelope.url, params: envelope.data };
}
