import { z } from 'zod';
import type { QuotaData } from '../db/schema/quota-data.ts';
import { queryInt, queryText } from './logs.ts';

/** The longest span a user may ask of their own dashboard data. */
export const SELF_DATA_MAX_SPAN_SECONDS = 30 * 24 * 3600;

/** How far back the dashboard looks when no start is given, by the DataExportDefaultTime granularity. */
export const DEFAULT_DATA_WINDOW_SECONDS = {
  hour: 24 * 3600,
  day: 7 * 24 * 3600,
  week: 30 * 24 * 3600,
} as const;

const range = {
  start_timestamp: queryInt('start_timestamp', 'a Unix time in seconds'),
  end_timestamp: queryInt('end_timestamp', 'a Unix time in seconds'),
};

/** `GET /api/data/self`. */
export const selfDataQuerySchema = z.object(range);
export type SelfDataQuery = z.infer<typeof selfDataQuerySchema>;

/** `GET /api/data/` (admin): one user's rows by username, or every user's summed per model and hour. */
export const adminDataQuerySchema = z.object({ ...range, username: queryText('username', 64) });
export type AdminDataQuery = z.infer<typeof adminDataQuerySchema>;

/** Usage of one model in one hour: of one user, or of everyone when `user_id` is 0 and `username` empty. */
export interface QuotaDataView {
  id: number;
  user_id: number;
  username: string;
  model_name: string;
  /** Start of the hour, Unix seconds. */
  created_at: number;
  token_used: number;
  count: number;
  quota: number;
}

export function toQuotaDataView(row: QuotaData): QuotaDataView {
  return {
    id: row.id,
    user_id: row.userId,
    username: row.username,
    model_name: row.modelName,
    created_at: row.createdAt,
    token_used: row.tokenUsed,
    count: row.count,
    quota: row.quota,
  };
}
