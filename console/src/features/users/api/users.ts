import { api } from '../../../lib/api.ts';
import type { QuotaWindow, QuotaWindowStateView } from '../../quota-windows/rules.ts';

/** A user as GET /api/user/… answers (spec 01 section 3). */
export interface UserRow {
  id: number;
  username: string;
  display_name: string;
  role: number;
  status: number;
  email: string;
  group: string;
  quota: number;
  used_quota: number;
  request_count: number;
  github_id?: string;
  oidc_id?: string;
  wechat_id?: string;
  telegram_id?: string;
  linux_do_id?: string;
  inviter_id?: number;
  aff_count?: number;
  DeletedAt: string | null;
  /** The user's own budgets that reset; the states and the group's windows come with one user (GET /api/user/:id). */
  quota_windows?: QuotaWindow[];
  quota_window_states?: QuotaWindowStateView[];
  group_quota_windows?: QuotaWindow[];
  group_quota_window_states?: QuotaWindowStateView[];
}

export interface UserPage {
  items: UserRow[];
  total: number;
  page: number;
}

export interface UserSearch {
  keyword: string;
  group: string;
  page: number;
  pageSize: number;
}

export const usersQueryKey = (search: UserSearch) => ['users', search] as const;

/** The list, or the search when a keyword or group is given. */
export function fetchUsers({ keyword, group, page, pageSize }: UserSearch): Promise<UserPage> {
  const paging = { p: page, page_size: pageSize };
  if (keyword.trim() || group) {
    return api.get<UserPage>('/api/user/search', { query: { keyword: keyword.trim(), group, ...paging } });
  }
  return api.get<UserPage>('/api/user/', { query: paging });
}

export const fetchUser = (id: number) => api.get<UserRow>(`/api/user/${id}`);

export const fetchGroups = () => api.get<string[]>('/api/group/');

export interface NewUser {
  username: string;
  display_name: string;
  password: string;
}

export const createUser = (user: NewUser) => api.post<UserRow>('/api/user/', user);

export interface UserUpdate {
  id: number;
  username: string;
  display_name: string;
  password: string;
  group: string;
  quota: number;
  /** Only when changed: an edit without them keeps the user's windows. */
  quota_windows?: QuotaWindow[];
}

export const updateUser = (user: UserUpdate) => api.put<UserRow>('/api/user/', user);

export type ManageAction = 'promote' | 'demote' | 'disable' | 'enable' | 'delete';

export const manageUser = (id: number, action: ManageAction) =>
  api.post<{ role: number; status: number }>('/api/user/manage', { id, action });
