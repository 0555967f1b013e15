import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import {
  FilterBar,
  ListPage,
  RowTable,
  type SearchOf,
  useColumnChoice,
  useFilterDraft,
  useKeySet,
  useListPage,
  useSheet,
} from '../../../components/data-table/index.ts';
import { EmptyState } from '../../../components/ui/empty-state.tsx';
import { Button, Input, Select, Tag } from '../../../components/ui/index.ts';
import { formatNumber, formatQuota } from '../../../lib/format.ts';
import { isAdmin, useSessionUser } from '../../../lib/session.ts';
import { useQuotaDisplay } from '../../../lib/status.ts';
import { fetchLogStat, fetchLogs, type LogFilters, type LogRow } from '../api/logs.ts';
import {
  defaultLogRange,
  fromLocalInput,
  isLogColumnAllowed,
  LOG_COLUMNS,
  LOG_COLUMNS_KEY,
  LOG_TYPE_NAMES,
  LogType,
  toLocalInput,
} from '../rules.ts';
import { logsSearch } from '../search.ts';
import { type LogFilterErrors, validateLogFilters } from '../validation.ts';
import { logCell } from './log-cells.tsx';
import { LogContent } from './log-content.tsx';
import { LogDetails } from './log-details.tsx';
import { UserInfoDialog } from './user-info-dialog.tsx';

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
  const expanded = useKeySet<number>();
  const columns = useColumnChoice({
    storageKey: LOG_COLUMNS_KEY,
    columns: LOG_COLUMNS,
    allowed: (c) => isLogColumnAllowed(c, admin),
    title: t('columns.title'),
    label: (c) => t(`col.${c}`),
    resetLabel: t('columns.reset'),
  });
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
    expanded.clear();
  };

  const reset = () => {
    setErrors({});
    filter.discard();
    list.reset();
  };

  const items = logs.data?.items ?? [];
  const cells = { t, admin, display, onUser: userInfo.open };

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
            <Button variant="ghost" onClick={columns.open}>
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
        <RowTable<LogRow>
          columns={columns.shown.map((c) => ({
            id: c,
            header: t(`col.${c}`),
            cell: (log) => logCell(c, log, cells),
          }))}
          rows={items}
          rowKey={(log) => log.id}
          loading={logs.isFetching && !logs.data}
          empty={
            <EmptyState title={t('empty.title')}>
              <p className="text-sm">{t('empty.hint')}</p>
            </EmptyState>
          }
          details={{
            isOpen: (log) => expanded.has(log.id),
            toggle: (log) => expanded.toggle(log.id),
            columnLabel: t('details.toggle'),
            toggleLabel: (log) => t('details.toggleRow', { id: log.id }),
            render: (log) => (
              <>
                <LogDetails log={log} admin={admin} />
                <LogContent requestId={log.request_id} />
              </>
            ),
          }}
        />
      }
    >
      {columns.dialog}
      {userInfo.of !== undefined ? (
        <UserInfoDialog id={userInfo.of} display={display} onClose={userInfo.close} />
      ) : null}
    </ListPage>
  );
}
