import type { AdminLogView, SelfLogView } from '@turnpike/core/contracts/logs';
import { api } from '../../../lib/api.ts';

/** A log row as GET /api/log/ (admin) or /api/log/self/ answers; `channel*` only for admins. */
export type LogRow = SelfLogView & Partial<Pick<AdminLogView, 'channel' | 'channel_name'>>;

export interface LogPage {
  items: LogRow[];
  total: number;
  page: number;
  page_size: number;
}

export interface LogStat {
  quota: number;
  rpm: number;
  tpm: number;
}

/** The filter form; empty strings mean "no filter". Times are Unix seconds. */
export interface LogFilters {
  type: number;
  token_name: string;
  model_name: string;
  group: string;
  start_timestamp: number;
  end_timestamp: number;
  /** Admin only. */
  username: string;
  /** Admin only: a channel id. */
  channel: string;
}

function queryOf(filters: LogFilters, admin: boolean) {
  return {
    type: filters.type || undefined,
    token_name: filters.token_name.trim() || undefined,
    model_name: filters.model_name.trim() || undefined,
    group: filters.group.trim() || undefined,
    start_timestamp: filters.start_timestamp || undefined,
    end_timestamp: filters.end_timestamp || undefined,
    ...(admin
      ? { username: filters.username.trim() || undefined, channel: filters.channel.trim() || undefined }
      : {}),
  };
}

export function fetchLogs(admin: boolean, filters: LogFilters, page: number, pageSize: number) {
  return api.get<LogPage>(admin ? '/api/log/' : '/api/log/self/', {
    query: { ...queryOf(filters, admin), p: page, page_size: pageSize },
  });
}

export function fetchLogStat(admin: boolean, filters: LogFilters) {
  return api.get<LogStat>(admin ? '/api/log/stat' : '/api/log/self/stat', { query: queryOf(filters, admin) });
}

/** What the admin's per-user dialog shows. */
export interface LogUserInfo {
  id: number;
  username: string;
  quota: number;
  used_quota: number;
  request_count: number;
}

export const fetchLogUser = (id: number) => api.get<LogUserInfo>(`/api/user/${id}`);
