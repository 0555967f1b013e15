import type { Page } from '@turnpike/core/contracts/envelope';
import {
  type AdminLogQuery,
  type AdminLogView,
  type LogSearchQuery,
  type LogStat,
  type SelfLogQuery,
  type SelfLogView,
  toAdminLogView,
  toSelfLogView,
} from '@turnpike/core/contracts/logs';
import type { User } from '@turnpike/core/db/schema/users';
import { AppError } from '@turnpike/core/errors';
import { createLogRepo, type LogFilter, type LogPage, nowSeconds } from '@turnpike/core/repos/log.repo';
import { createTokenRepo } from '@turnpike/core/repos/token.repo';
import type { AppDeps } from '../../deps.ts';

function ownFilter(query: SelfLogQuery): LogFilter {
  return {
    type: query.type,
    tokenName: query.token_name,
    modelName: query.model_name,
    start: query.start_timestamp,
    end: query.end_timestamp,
    group: query.group,
  };
}

function adminFilter(query: AdminLogQuery): LogFilter {
  return { ...ownFilter(query), username: query.username, channelId: query.channel };
}

function pageOf<T>(
  result: LogPage,
  query: { p: number; page_size: number },
  view: (row: LogPage['rows'][number]) => T,
): Page<T> {
  return { items: result.rows.map(view), total: result.total, page: query.p, page_size: query.page_size };
}

const pageRequest = (query: { p: number; page_size: number }) => ({
  page: query.p,
  pageSize: query.page_size,
});
const adminView = (row: LogPage['rows'][number]) => toAdminLogView(row.log, row.channelName);
const selfView = (row: LogPage['rows'][number]) => toSelfLogView(row.log);

/**
 * Usage logs. Administrators see every row with its channel; a user sees their own rows only, without the
 * channel and the admin-only parts of `other` (the views in the contracts decide what each sees).
 */
/** How many logs `GET /api/log/token` answers at most (newest first). */
export const TOKEN_LOG_LIMIT = 1000;

export function createLogsService(deps: AppDeps) {
  const repo = createLogRepo(deps.db);
  return {
    async listAll(query: AdminLogQuery): Promise<Page<AdminLogView>> {
      return pageOf(await repo.list(adminFilter(query), pageRequest(query)), query, adminView);
    },

    async listOwn(user: User, query: SelfLogQuery): Promise<Page<SelfLogView>> {
      const filter = { ...ownFilter(query), userId: user.id };
      return pageOf(await repo.list(filter, pageRequest(query)), query, selfView);
    },

    async searchAll(query: LogSearchQuery): Promise<Page<AdminLogView>> {
      return pageOf(await repo.search(query.keyword, {}, pageRequest(query)), query, adminView);
    },

    async searchOwn(user: User, query: LogSearchQuery): Promise<Page<SelfLogView>> {
      const result = await repo.search(query.keyword, { userId: user.id }, pageRequest(query));
      return pageOf(result, query, selfView);
    },

    /**
     * The newest logs (at most {@link TOKEN_LOG_LIMIT}) of the token with this key, for key-query pages and
     * scripts: knowing the key is the authorization, as for a relay call.
     */
    async listOfKey(key: string): Promise<SelfLogView[]> {
      const token = await createTokenRepo(deps.db).findByKey(key.replace(/^sk-/, ''));
      if (!token) throw new AppError('UNAUTHENTICATED', 'invalid API key');
      const result = await repo.list({ tokenId: token.id }, { page: 1, pageSize: TOKEN_LOG_LIMIT });
      return result.rows.map(selfView);
    },

    statAll(query: AdminLogQuery, now = nowSeconds()): Promise<LogStat> {
      return repo.stat(adminFilter(query), now);
    },

    statOwn(user: User, query: SelfLogQuery, now = nowSeconds()): Promise<LogStat> {
      return repo.stat({ ...ownFilter(query), userId: user.id }, now);
    },

    /** Deletes every log created before `timestamp` (Unix seconds); answers the count. */
    deleteBefore(timestamp: number): Promise<number> {
      return repo.deleteBefore(timestamp);
    },
  };
}
