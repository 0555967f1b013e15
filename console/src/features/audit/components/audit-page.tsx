import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import {
  FilterBar,
  ListPage,
  type TableColumn,
  useFilterDraft,
  useListPage,
} from '../../../components/data-table/index.ts';
import { Button, EmptyState, Input, Select, Tag } from '../../../components/ui/index.ts';
import { formatTimestamp } from '../../../lib/format.ts';
import { toast } from '../../../lib/toast.ts';
import { type AuditRow, auditQueryKey, downloadAuditExport, fetchAudit } from '../api/audit.ts';
import { AUDIT_KINDS, AUDIT_OUTCOMES, auditSearch } from '../search.ts';

const outcomeColor = { ok: 'green', refused: 'orange', failed: 'red' } as const;

const pretty = (value: unknown) =>
  value === null || value === undefined ? '' : JSON.stringify(value, null, 2);

/** Before and after of one change, side by side; what was asked below. */
function ChangeDetails({ row }: { row: AuditRow }) {
  const { t } = useTranslation('audit');
  const before = pretty(row.before);
  const after = pretty(row.after);
  const asked = pretty(row.request);
  if (!before && !after && !asked && !row.message) return <span className="text-gray-400">-</span>;
  return (
    <details>
      <summary className="cursor-pointer text-blue-600">{t('details.show')}</summary>
      <div className="mt-2 grid max-w-3xl grid-cols-1 gap-2 text-xs sm:grid-cols-2">
        {row.message ? <p className="text-red-600 sm:col-span-2">{row.message}</p> : null}
        <figure>
          <figcaption className="text-gray-500">{t('details.before')}</figcaption>
          <pre className="overflow-x-auto whitespace-pre-wrap break-all rounded bg-gray-50 p-2 dark:bg-gray-900">
            {before || '-'}
          </pre>
        </figure>
        <figure>
          <figcaption className="text-gray-500">{t('details.after')}</figcaption>
          <pre className="overflow-x-auto whitespace-pre-wrap break-all rounded bg-gray-50 p-2 dark:bg-gray-900">
            {after || '-'}
          </pre>
        </figure>
        {asked ? (
          <figure className="sm:col-span-2">
            <figcaption className="text-gray-500">{t('details.request')}</figcaption>
            <pre className="overflow-x-auto whitespace-pre-wrap break-all rounded bg-gray-50 p-2 dark:bg-gray-900">
              {asked}
            </pre>
          </figure>
        ) : null}
        <p className="text-gray-500 sm:col-span-2">
          {t('details.from', {
            ip: row.ip || '-',
            agent: row.user_agent || '-',
            request: row.request_id || '-',
          })}
        </p>
      </div>
    </details>
  );
}

/** Root's audit trail of administrative changes: filters in the URL, newest first, exported as JSON lines. */
export function AuditPage() {
  const { t } = useTranslation('audit');
  const list = useListPage(auditSearch, 'audit');
  const filter = useFilterDraft({
    actor: list.search.actor,
    kind: list.search.kind,
    outcome: list.search.outcome,
    from: list.search.from,
    to: list.search.to,
  });
  const query = { ...list.search, pageSize: list.pageSize };
  const trail = useQuery({
    queryKey: auditQueryKey(query),
    queryFn: () => fetchAudit(query),
    placeholderData: keepPreviousData,
  });
  const rows = trail.data?.items ?? [];

  const exportAll = async () => {
    try {
      await downloadAuditExport(list.search);
    } catch {
      toast.error(t('exportFailed'));
    }
  };

  const actorOf = (row: AuditRow) =>
    row.actor_type === 'operator' ? t('actor.operator') : `${row.actor_name} #${row.actor_id}`;

  const columns: TableColumn<AuditRow>[] = [
    { id: 'time', header: t('col.time'), cell: ({ row }) => formatTimestamp(row.original.created_at) },
    {
      id: 'actor',
      header: t('col.actor'),
      cell: ({ row }) => (
        <span className="whitespace-nowrap">
          {actorOf(row.original)}
          {row.original.actor_type === 'token' ? <Tag color="blue">{t('actor.token')}</Tag> : null}
        </span>
      ),
    },
    { id: 'kind', header: t('col.kind'), cell: ({ row }) => t(`kind.${row.original.kind}`) },
    { accessorKey: 'action', header: t('col.action') },
    { id: 'targets', header: t('col.targets'), cell: ({ row }) => row.original.target_ids.join(', ') || '-' },
    {
      id: 'outcome',
      header: t('col.outcome'),
      cell: ({ row }) => {
        const outcome = row.original.outcome as keyof typeof outcomeColor;
        return <Tag color={outcomeColor[outcome] ?? 'gray'}>{t(`outcome.${outcome}`)}</Tag>;
      },
    },
    { accessorKey: 'source', header: t('col.source') },
    { id: 'details', header: t('col.details'), cell: ({ row }) => <ChangeDetails row={row.original} /> },
  ];

  const kindOptions = [
    { value: '', label: t('all') },
    ...AUDIT_KINDS.map((k) => ({ value: k, label: t(`kind.${k}`) })),
  ];
  const outcomeOptions = [
    { value: '', label: t('all') },
    ...AUDIT_OUTCOMES.map((o) => ({ value: o, label: t(`outcome.${o}`) })),
  ];
  const isEmpty = !trail.isLoading && !trail.isError && rows.length === 0 && !list.isFiltered;

  return (
    <ListPage
      title={t('title')}
      filters={
        <FilterBar
          onSubmit={() => list.apply(filter.draft)}
          submitLabel={t('search.submit')}
          actions={
            <Button variant="secondary" onClick={() => void exportAll()}>
              {t('export')}
            </Button>
          }
        >
          <div className="w-full sm:w-40">
            <Input label={t('search.actor')} placeholder={t('search.actorHint')} {...filter.field('actor')} />
          </div>
          <div className="w-full sm:w-40">
            <Select label={t('search.kind')} options={kindOptions} {...filter.field('kind')} />
          </div>
          <div className="w-full sm:w-36">
            <Select label={t('search.outcome')} options={outcomeOptions} {...filter.field('outcome')} />
          </div>
          <div className="w-full sm:w-44">
            <Input type="date" label={t('search.from')} {...filter.field('from')} />
          </div>
          <div className="w-full sm:w-44">
            <Input type="date" label={t('search.to')} {...filter.field('to')} />
          </div>
        </FilterBar>
      }
      empty={
        isEmpty ? (
          <EmptyState title={t('empty.title')}>
            <p className="text-sm">{t('empty.description')}</p>
          </EmptyState>
        ) : undefined
      }
      columns={columns}
      rows={rows}
      rowKey={(r) => r.id}
      loading={trail.isFetching && !trail.data}
      paging={list.paging(trail.data?.total ?? 0)}
    />
  );
}
