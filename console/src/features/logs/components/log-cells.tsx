import type { TFunction } from 'i18next';
import type { ReactNode } from 'react';
import { Tag } from '../../../components/ui/index.ts';
import { formatNumber, formatQuota, formatTimestamp, type QuotaDisplay } from '../../../lib/format.ts';
import type { LogRow } from '../api/logs.ts';
import {
  firstTokenColor,
  hasUsageDetails,
  LOG_TYPE_NAMES,
  type LogColumn,
  latencyColor,
  logTypeColor,
  parseOther,
  retryPath,
} from '../rules.ts';

export interface LogCellContext {
  readonly t: TFunction<'logs'>;
  readonly admin: boolean;
  readonly display: QuotaDisplay;
  /** Opens the user's card (admins, from the user name). */
  readonly onUser: (userId: number) => void;
}

/** What one log row shows in one column; the usage columns stay empty for rows without usage (a top-up). */
export function logCell(
  column: LogColumn,
  log: LogRow,
  { t, admin, display, onUser }: LogCellContext,
): ReactNode {
  const other = parseOther(log.other);
  const usage = hasUsageDetails(log.type);
  switch (column) {
    case 'time':
      return formatTimestamp(log.created_at);
    case 'channel':
      return usage && log.channel ? (
        <span title={log.channel_name || undefined}>
          <Tag color="blue">{log.channel}</Tag>
          {log.channel_name ? <span className="ml-1 text-xs text-gray-500">{log.channel_name}</span> : null}
        </span>
      ) : null;
    case 'username':
      return log.username ? (
        <button type="button" className="text-blue-600 hover:underline" onClick={() => onUser(log.user_id)}>
          {log.username}
        </button>
      ) : null;
    case 'token':
      return usage && log.token_name ? <Tag>{log.token_name}</Tag> : null;
    case 'group':
      return usage && log.group ? <Tag>{log.group}</Tag> : null;
    case 'type':
      return <Tag color={logTypeColor(log.type)}>{t(`type.${LOG_TYPE_NAMES[log.type] ?? 'unknown'}`)}</Tag>;
    case 'model':
      return usage ? (
        <span>
          {log.model_name}
          {admin && other.is_model_mapped && other.upstream_model_name ? (
            <span className="ml-1 text-xs text-gray-500">→ {other.upstream_model_name}</span>
          ) : null}
        </span>
      ) : null;
    case 'useTime':
      return usage ? (
        <span className="flex flex-wrap gap-1">
          <Tag color={latencyColor(log.use_time)}>{t('useTime', { seconds: log.use_time })}</Tag>
          {log.is_stream && other.frt !== undefined && other.frt > 0 ? (
            <Tag color={firstTokenColor(other.frt / 1000)}>
              {t('firstToken', { seconds: (other.frt / 1000).toFixed(1) })}
            </Tag>
          ) : null}
          <Tag color={log.is_stream ? 'blue' : 'purple'}>{log.is_stream ? t('stream') : t('nonStream')}</Tag>
        </span>
      ) : null;
    case 'prompt':
      return usage ? formatNumber(log.prompt_tokens) : null;
    case 'completion':
      return usage ? formatNumber(log.completion_tokens) : null;
    case 'quota':
      return usage ? formatQuota(log.quota, display) : null;
    case 'retry':
      return retryPath(other);
    case 'details':
      return (
        <span className="block max-w-xs truncate" title={log.content}>
          {log.content}
        </span>
      );
  }
}
