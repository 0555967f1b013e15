import type { QuotaDataView } from '@turnpike/core/contracts/data';
import { api } from '../../../lib/api.ts';

/** Usage of one model in one hour (of one user, or of everyone summed when the admin names no user). */
export type QuotaDataRow = QuotaDataView;

/** The applied filters. Times are Unix seconds. */
export interface DataFilters {
  start: number;
  end: number;
  /** Admin only: one user's rows; blank for everyone's usage summed per model and hour. */
  username: string;
}

/** GET /api/data/ (admin) or /api/data/self. Silent: the page shows the failure in place. */
export function fetchQuotaData(admin: boolean, filters: DataFilters) {
  return api.get<QuotaDataRow[]>(admin ? '/api/data/' : '/api/data/self', {
    silent: true,
    query: {
      start_timestamp: filters.start,
      end_timestamp: filters.end,
      ...(admin ? { username: filters.username.trim() || undefined } : {}),
    },
  });
}
