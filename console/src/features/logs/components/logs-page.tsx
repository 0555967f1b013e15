import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { Fragment, type ReactNode, useState } from 'react';
import { useTranslation } from 'react-i18next';
import {
  FilterBar,
  ListPage,
  type SearchOf,
  useFilterDraft,
  useListPage,
  useSheet,
} from '../../../components/data-table/index.ts';
import { EmptyState } from '../../../components/ui/empty-state.tsx';
import { Button, Input, Modal, Select, Spinner, Tag } from '../../../components/ui/index.ts';
import { formatNumber, formatQuota, formatTimestamp } from '../../../lib/format.ts';
import { isAdmin, useSessionUser } from '../../../lib/session.ts';
import { useQuotaDisplay } from '../../../lib/status.ts';
import { fetchLogStat, fetchLogs, fetchLogUser, type LogFilters, type LogRow } from '../api/logs.ts';
import {
  ADMIN_LOG_COLUMNS,
  defaultLogRange,
  firstTokenColor,
  fromLocalInput,
  hasUsageDetails,
  LOG_COLUMNS,
  LOG_TYPE_NAMES,
  type LogColumn,
  LogType,
  latencyColor,
  loadVisibleColumns,
  logTypeColor,
  parseOther,
  retryPath,
  saveVisibleColumns,
  toLocalInput,
} from '../rules.ts';
import { logsSearch } from '../search.ts';
import { type LogFilterErrors, validateLogFilters } from '../validation.ts';
import { LogContent } from './log-content.tsx';
import { LogDetails } from './log-details.tsx';

type LogSearch = SearchOf<typeof logsSearch>;
type FormState = Omit<LogSearch, 'page'>;

/** The filters as the form shows them: an absent start or end is the default range. */
function formOf(search: LogSearch, range: { start: number; end: number }): FormState {
  const { page: _page, ...filters } = search;
  return {
    ...filters,
    start: filters.start || toLocalInput(range.start),
    end: filters.end || toLocalInput(range.end),
  };
}

const toFilters = (form: FormState): LogFilters => ({
  type: Number(form.type),
  token_name: form.token_name,
  model_name: form.model_name,
  group: form.group,
  start_timestamp: fromLocalInput(form.start),
  end_timestamp: fromLocalInput(form.end),
  username: form.username,
  channel: form.channel,
});

/** Usage logs: filters, totals, a table with expandable rows and remembered column settings. */
export function LogsPage() {
  const { t } = useTranslation('logs');
  const user = useSessionUser();
  const admin = isAdmin(user);
  const display = useQuotaDisplay();
  const list = useListPage(logsSearch, 'logs');
  // The default range is fixed when the page opens, so it does not move while the list is read.
  const [range] = useState(() => defaultLogRange());
  const applied = formOf(list.search, range);
  const filter = useFilterDraft(applied);
  const form = filter.draft;
  const filters = toFilters(applied);
  const { page } = list.search;
  const { pageSize } = list;
  const [errors, setErrors] = useState<LogFilterErrors>({});
  const [expanded, setExpanded] = useState<Set<number>>(() => new Set());
  const [columns, setColumns] = useState(() => loadVisibleColumns(admin));
  const columnSettings = useSheet<true>();
  const userInfo = useSheet<number>();

  const logs = useQuery({
    queryKey: ['logs', admin, filters, page, pageSize],
    queryFn: () => fetchLogs(admin, filters, page, pageSize),
    placeholderData: keepPreviousData,
  });
  const stat = useQuery({
    queryKey: ['logs-stat', admin, filters],
    queryFn: () => fetchLogStat(admin, filters),
  });

  const set = (key: keyof FormState) => filter.field(key).onChange;

  const submit = () => {
    const found = validateLogFilters(form, admin);
    setErrors(found);
    if (Object.keys(found).length > 0) return;
    const defaults = formOf(logsSearch.defaults, range);
    // the default range stays out of the URL, so the link keeps meaning "today"
    list.apply({
      ...form,
      start: form.start === defaults.start ? '' : form.start,
      end: form.end === defaults.end ? '' : form.end,
    });
    setExpanded(new Set());
  };

  const reset = () => {
    setErrors({});
    filter.discard();
    list.reset();
  };

  const toggle = (id: number) =>
    setExpanded((prev) => {
      const next = new Set(prev);
      if (next.has(id)) next.delete(id);
      else next.add(id);
      return next;
    });

  const shown = LOG_COLUMNS.filter((c) => columns[c]);
  const items = logs.data?.items ?? [];

  const cell = (column: LogColumn, log: LogRow): ReactNode => {
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
          <button
            type="button"
            className="text-blue-600 hover:underline"
            onClick={() => userInfo.open(log.user_id)}
          >
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
            <Tag color={log.is_stream ? 'blue' : 'purple'}>
              {log.is_stream ? t('stream') : t('nonStream')}
            </Tag>
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
  };

  return (
    <ListPage
      title={t('title')}
      filters={
        <FilterBar
          onSubmit={submit}
          onReset={reset}
          submitLabel={t('filter.submit')}
          resetLabel={t('filter.reset')}
          loading={logs.isFetching}
          className="mb-3 grid grid-cols-1 gap-2 sm:grid-cols-2 lg:grid-cols-4"
          actions={
            <Button variant="ghost" onClick={() => columnSettings.open(true)}>
              {t('columns.open')}
            </Button>
          }
        >
          <Input type="datetime-local" label={t('filter.start')} value={form.start} onChange={set('start')} />
          <Input
            type="datetime-local"
            label={t('filter.end')}
            value={form.end}
            onChange={set('end')}
            error={errors.end ? t(errors.end) : null}
          />
          <Input label={t('filter.token')} value={form.token_name} onChange={set('token_name')} />
          <Input label={t('filter.model')} value={form.model_name} onChange={set('model_name')} />
          <Input label={t('filter.group')} value={form.group} onChange={set('group')} />
          <Select
            label={t('filter.type')}
            value={form.type}
            onChange={set('type')}
            options={[
              { value: '0', label: t('type.all') },
              ...[LogType.TopUp, LogType.Consume, LogType.Manage, LogType.System, LogType.Error].map((v) => ({
                value: String(v),
                label: t(`type.${LOG_TYPE_NAMES[v]}`),
              })),
            ]}
          />
          {admin ? (
            <>
              <Input label={t('filter.username')} value={form.username} onChange={set('username')} />
              <Input
                label={t('filter.channel')}
                value={form.channel}
                inputMode="numeric"
                onChange={set('channel')}
                error={errors.channel ? t(errors.channel) : null}
              />
            </>
          ) : null}
        </FilterBar>
      }
      summary={
        <section className="mb-3 flex flex-wrap gap-2 text-sm" aria-label={t('stat.label')}>
          <Tag color="blue">
            {t('stat.quota')}: {stat.data ? formatQuota(stat.data.quota, display) : '…'}
          </Tag>
          <Tag color="purple">RPM: {stat.data ? formatNumber(stat.data.rpm) : '…'}</Tag>
          <Tag color="gray">TPM: {stat.data ? formatNumber(stat.data.tpm) : '…'}</Tag>
        </section>
      }
      paging={list.paging(logs.data?.total ?? 0)}
      table={
        <div className="overflow-x-auto rounded-lg border border-gray-200 dark:border-gray-700">
          <table className="min-w-full divide-y divide-gray-200 text-sm dark:divide-gray-700">
            <thead className="bg-gray-50 dark:bg-gray-800">
              <tr>
                <th className="w-8 px-2 py-2">
                  <span className="sr-only">{t('details.toggle')}</span>
                </th>
                {shown.map((c) => (
                  <th
                    key={c}
                    className="whitespace-nowrap px-3 py-2 text-left font-medium text-gray-600 dark:text-gray-300"
                  >
                    {t(`col.${c}`)}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody className="divide-y divide-gray-100 dark:divide-gray-800">
              {items.map((log) => (
                <Fragment key={log.id}>
                  <tr className="hover:bg-gray-50 dark:hover:bg-gray-800/50">
                    <td className="px-2 py-2">
                      <button
                        type="button"
                        aria-expanded={expanded.has(log.id)}
                        aria-label={t('details.toggleRow', { id: log.id })}
                        className="rounded px-1 text-gray-500 hover:bg-gray-100 dark:hover:bg-gray-800"
                        onClick={() => toggle(log.id)}
                      >
                        {expanded.has(log.id) ? '▾' : '▸'}
                      </button>
                    </td>
                    {shown.map((c) => (
                      <td key={c} className="whitespace-nowrap px-3 py-2">
                        {cell(c, log)}
                      </td>
                    ))}
                  </tr>
                  {expanded.has(log.id) ? (
                    <tr className="bg-gray-50 dark:bg-gray-800/40">
                      <td />
                      <td colSpan={shown.length} className="px-3 py-2">
                        <LogDetails log={log} admin={admin} />
                        <LogContent requestId={log.request_id} />
                      </td>
                    </tr>
                  ) : null}
                </Fragment>
              ))}
            </tbody>
          </table>
          {logs.isFetching && !logs.data ? (
            <div className="flex justify-center py-6 text-blue-600">
              <Spinner />
            </div>
          ) : items.length === 0 ? (
            <EmptyState title={t('empty.title')}>
              <p className="text-sm">{t('empty.hint')}</p>
            </EmptyState>
          ) : null}
        </div>
      }
    >
      {columnSettings.isOpen ? (
        <ColumnSettings
          open
          admin={admin}
          value={columns}
          onClose={columnSettings.close}
          onSave={(next) => {
            setColumns(next);
            saveVisibleColumns(next);
            columnSettings.close();
          }}
        />
      ) : null}
      {userInfo.of !== undefined ? (
        <UserInfoDialog id={userInfo.of} display={display} onClose={userInfo.close} />
      ) : null}
    </ListPage>
  );
}

function ColumnSettings({
  open,
  admin,
  value,
  onClose,
  onSave,
}: {
  open: boolean;
  admin: boolean;
  value: Record<LogColumn, boolean>;
  onClose: () => void;
  onSave: (next: Record<LogColumn, boolean>) => void;
}) {
  const { t } = useTranslation('logs');
  const [draft, setDraft] = useState(value);
  const choices = LOG_COLUMNS.filter((c) => admin || !ADMIN_LOG_COLUMNS.includes(c));
  const setAll = (on: boolean) =>
    setDraft(Object.fromEntries(LOG_COLUMNS.map((c) => [c, on && choices.includes(c)])) as typeof draft);
  return (
    <Modal
      open={open}
      onClose={onClose}
      title={t('columns.title')}
      footer={
        <>
          <Button variant="secondary" onClick={() => setAll(true)}>
            {t('columns.reset')}
          </Button>
          <Button variant="secondary" onClick={onClose}>
            {t('common:common.cancel')}
          </Button>
          <Button onClick={() => onSave(draft)}>{t('common:common.save')}</Button>
        </>
      }
    >
      <div className="grid grid-cols-2 gap-2">
        {choices.map((c) => (
          <label key={c} className="flex items-center gap-2">
            <input
              type="checkbox"
              checked={draft[c]}
              onChange={(e) => setDraft((d) => ({ ...d, [c]: e.target.checked }))}
            />
            {t(`col.${c}`)}
          </label>
        ))}
      </div>
    </Modal>
  );
}

function UserInfoDialog({
  id,
  display,
  onClose,
}: {
  id: number;
  display: { quotaPerUnit: number; inCurrency: boolean };
  onClose: () => void;
}) {
  const { t } = useTranslation('logs');
  const info = useQuery({ queryKey: ['log-user', id], queryFn: () => fetchLogUser(id) });
  return (
    <Modal open onClose={onClose} title={t('userInfo.title')} size="sm">
      {info.data ? (
        <dl className="grid grid-cols-2 gap-2">
          <dt className="text-gray-500">{t('userInfo.username')}</dt>
          <dd>{info.data.username}</dd>
          <dt className="text-gray-500">{t('userInfo.quota')}</dt>
          <dd>{formatQuota(info.data.quota, display)}</dd>
          <dt className="text-gray-500">{t('userInfo.usedQuota')}</dt>
          <dd>{formatQuota(info.data.used_quota, display)}</dd>
          <dt className="text-gray-500">{t('userInfo.requests')}</dt>
          <dd>{formatNumber(info.data.request_count)}</dd>
        </dl>
      ) : info.isError ? (
        <p className="text-red-600">{t('userInfo.failed')}</p>
      ) : (
        <Spinner />
      )}
    </Modal>
  );
}
