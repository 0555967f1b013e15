import { api } from '../../../lib/api.ts';
import type { QuotaWindow, QuotaWindowStateView } from '../../quota-windows/rules.ts';

/** A token as GET /api/token/… answers; `key` already carries `sk-`. */
export interface TokenRow {
  id: number;
  user_id: number;
  key: string;
  status: number;
  name: string;
  created_time: number;
  accessed_time: number;
  expired_time: number;
  remain_quota: number;
  unlimited_quota: boolean;
  model_limits_enabled: boolean;
  model_limits: string;
  allow_ips: string;
  used_quota: number;
  group: string;
  rpm_limit: number;
  tpm_limit: number;
  concurrency_limit: number;
  /** Budgets that reset, and what each has spent (absent from a server without them). */
  quota_windows?: QuotaWindow[];
  quota_window_states?: QuotaWindowStateView[];
}

export interface TokenPage {
  items: TokenRow[];
  total: number;
  page: number;
  page_size: number;
}

export interface TokenSearch {
  keyword: string;
  token: string;
  page: number;
  pageSize: number;
}

/** The fields the create and edit calls send. */
export interface TokenFields {
  name: string;
  remain_quota: number;
  expired_time: number;
  unlimited_quota: boolean;
  model_limits_enabled: boolean;
  model_limits: string;
  allow_ips: string;
  group: string;
  rpm_limit: number;
  tpm_limit: number;
  concurrency_limit: number;
  quota_windows?: QuotaWindow[];
}

export const tokensQueryKey = (search: TokenSearch) => ['tokens', search] as const;

/** The list, or the search when a name keyword or a key is given. */
export function fetchTokens({ keyword, token, page, pageSize }: TokenSearch): Promise<TokenPage> {
  const paging = { p: page, size: pageSize };
  if (keyword.trim() || token.trim()) {
    return api.get<TokenPage>('/api/token/search', {
      query: { keyword: keyword.trim(), token: token.trim(), ...paging },
    });
  }
  return api.get<TokenPage>('/api/token/', { query: paging });
}

export const fetchToken = (id: number) => api.get<TokenRow>(`/api/token/${id}`);
export const createToken = (fields: TokenFields) => api.post<TokenRow>('/api/token/', fields);
export const updateToken = (fields: TokenFields & { id: number }) => api.put<TokenRow>('/api/token/', fields);
export const setTokenStatus = (id: number, status: number) =>
  api.put<TokenRow>('/api/token/', { id, status }, { query: { status_only: 'true' } });
export const deleteToken = (id: number) => api.delete<void>(`/api/token/${id}/`);

/** Models the signed-in user may call (for model limits). */
export const fetchUserModels = () => api.get<string[]>('/api/user/models');

/** Groups the signed-in user may use: name to description and ratio. */
export const fetchUserGroups = () =>
  api.get<Record<string, { desc: string; ratio: number }>>('/api/user/self/groups');
