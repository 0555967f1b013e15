import {
  type AdminDataQuery,
  DEFAULT_DATA_WINDOW_SECONDS,
  type QuotaDataView,
  SELF_DATA_MAX_SPAN_SECONDS,
  type SelfDataQuery,
  toQuotaDataView,
} from '@turnpike/core/contracts/data';
import type { User } from '@turnpike/core/db/schema/users';
import { AppError } from '@turnpike/core/errors';
import { nowSeconds } from '@turnpike/core/repos/log.repo';
import { createQuotaDataRepo, type QuotaDataRange } from '@turnpike/core/repos/quota-data.repo';
import type { AppDeps } from '../../deps.ts';

/**
 * The data dashboard: usage per user, model and hour from `quota_data`. Collection follows DataExportEnabled and
 * DataExportInterval (the relay's writer); when the operator turns the dashboard off, these reads are refused too,
 * so a stale chart is never shown as if it were current.
 */
export function createDataService(deps: AppDeps) {
  const repo = createQuotaDataRepo(deps.db);

  function assertEnabled(): void {
    if (!deps.options.get('DataExportEnabled')) {
      throw new AppError('FEATURE_DISABLED', 'the data dashboard is turned off (DataExportEnabled)');
    }
  }

  /** The asked range; a missing end is now, a missing start goes back the default window of the dashboard. */
  function rangeOf(query: SelfDataQuery, now: number): QuotaDataRange {
    const end = query.end_timestamp ?? now;
    const window = DEFAULT_DATA_WINDOW_SECONDS[deps.options.get('DataExportDefaultTime')];
    const start = query.start_timestamp ?? Math.max(0, end - window);
    if (start > end) {
      throw new AppError('VALIDATION_FAILED', 'start_timestamp must not be after end_timestamp');
    }
    return { start, end };
  }

  return {
    /** Admin: one user's rows when `username` is given, else everyone's usage summed per model and hour. */
    async listAll(query: AdminDataQuery, now = nowSeconds()): Promise<QuotaDataView[]> {
      assertEnabled();
      const range = rangeOf(query, now);
      const rows = query.username
        ? await repo.listForUser({ username: query.username }, range)
        : await repo.listAllByModelAndHour(range);
      return rows.map(toQuotaDataView);
    },

    /** The user's own rows, over at most 30 days. */
    async listOwn(user: User, query: SelfDataQuery, now = nowSeconds()): Promise<QuotaDataView[]> {
      assertEnabled();
      const range = rangeOf(query, now);
      if (range.end - range.start > SELF_DATA_MAX_SPAN_SECONDS) {
        throw new AppError('VALIDATION_FAILED', 'the time range may span at most 30 days');
      }
      const rows = await repo.listForUser({ userId: user.id }, range);
      return rows.map(toQuotaDataView);
    },
  };
}
