import type { Page } from '@turnpike/core/contracts/envelope';
import type { RedemptionView } from '@turnpike/core/contracts/redemptions';
import { api } from '../../../lib/api.ts';

/** A redemption code as GET /api/redemption/… answers. */
export type RedemptionRow = RedemptionView;
export type RedemptionPage = Page<RedemptionRow>;

export interface RedemptionSearch {
  keyword: string;
  page: number;
  pageSize: number;
}

/** The fields the create call sends; edit sends name and quota with the id. */
export interface RedemptionFields {
  name: string;
  quota: number;
}

export const redemptionsQueryKey = (search: RedemptionSearch) => ['redemptions', search] as const;

/** The list, or the search (by name, or by id when the keyword is a number) when a keyword is given. */
export function fetchRedemptions({ keyword, page, pageSize }: RedemptionSearch): Promise<RedemptionPage> {
  const paging = { p: page, page_size: pageSize };
  const trimmed = keyword.trim();
  if (trimmed) {
    return api.get<RedemptionPage>('/api/redemption/search', { query: { keyword: trimmed, ...paging } });
  }
  return api.get<RedemptionPage>('/api/redemption/', { query: paging });
}

export const fetchRedemption = (id: number) => api.get<RedemptionRow>(`/api/redemption/${id}`);
/** Creates `count` codes with the same name and quota; answers the generated keys. */
export const createRedemptions = (fields: RedemptionFields & { count: number }) =>
  api.post<string[]>('/api/redemption/', fields);
export const updateRedemption = (fields: RedemptionFields & { id: number }) =>
  api.put<RedemptionRow>('/api/redemption/', fields);
export const setRedemptionStatus = (id: number, status: number) =>
  api.put<RedemptionRow>('/api/redemption/', { id, status }, { query: { status_only: 'true' } });
export const deleteRedemption = (id: number) => api.delete<void>(`/api/redemption/${id}/`);
