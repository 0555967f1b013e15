import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { ListPage, type RowColumn, usePageSize } from '../../../components/data-table/index.ts';
import { Tag } from '../../../components/ui/index.ts';
import { formatQuota, formatTimestamp, type TagColor } from '../../../lib/format.ts';
import { isAdmin, useSessionUser } from '../../../lib/session.ts';
import { useQuotaDisplay } from '../../../lib/status.ts';
import { toast } from '../../../lib/toast.ts';
import { TaskLogEmpty, TaskLogTable } from '../../tasks/components/task-log-parts.tsx';
import { useServerPages } from '../../tasks/use-server-pages.ts';
import { type BatchRow, downloadBatchFile, fetchBatches } from '../api/batches.ts';

/** OpenAI's batch statuses, each with its colour. */
export const BATCH_STATUSES: Readonly<Record<string, TagColor>> = {
  validating: 'gray',
  in_progress: 'blue',
  finalizing: 'blue',
  completed: 'green',
  failed: 'red',
  expired: 'orange',
  cancelling: 'yellow',
  cancelled: 'gray',
};

const COLUMNS = [
  'created',
  'id',
  'user',
  'channel',
  'model',
  'mode',
  'status',
  'counts',
  'cost',
  'files',
] as const;
type Column = (typeof COLUMNS)[number];
const ADMIN_ONLY: ReadonlySet<Column> = new Set(['user', 'channel']);

/** The batches page: status, counts, cost and the downloads of each batch; administrators see every user's. */
export function BatchesPage() {
  const { t } = useTranslation('batches');
  const admin = isAdmin(useSessionUser());
  const display = useQuotaDisplay();
  const [pageSize, setPageSize] = usePageSize('batch');
  const [status, setStatus] = useState('');

  const list = useServerPages<BatchRow>({
    queryKey: ['batches', admin, status],
    pageSize,
    fetchPage: (page, size) => fetchBatches(admin, status, page, size),
  });

  const download = (fileId: string, filename: string) =>
    downloadBatchFile(admin, fileId, filename).catch(() => toast.error(t('download.failed')));

  const fileButton = (fileId: string | null, kind: 'output' | 'error', row: BatchRow) =>
    fileId ? (
      <button
        type="button"
        className="text-blue-600 hover:underline dark:text-blue-400"
        onClick={() => void download(fileId, `${row.id}_${kind}.jsonl`)}
      >
        {t(`download.${kind}`)}
      </button>
    ) : null;

  const cell = (column: Column, row: BatchRow) => {
    switch (column) {
      case 'created':
        return formatTimestamp(row.created_at);
      case 'id':
        return <span className="font-mono text-xs">{row.id}</span>;
      case 'user':
        return row.username || row.user_id;
      case 'channel':
        return row.channel_id ?? '-';
      case 'model':
        return row.model;
      case 'mode':
        return <Tag color={row.mode === 'gateway' ? 'gray' : 'purple'}>{t(`mode.${row.mode}`)}</Tag>;
      case 'status':
        return (
          <Tag color={BATCH_STATUSES[row.status] ?? 'gray'}>{t(`status.${row.status}`, row.status)}</Tag>
        );
      case 'counts':
        return t('counts', { completed: row.completed, failed: row.failed, total: row.total });
      case 'cost':
        return row.settled
          ? formatQuota(row.cost, display)
          : t('held', { amount: formatQuota(row.held, display) });
      case 'files':
        return (
          <span className="flex gap-2">
            {fileButton(row.output_file_id, 'output', row)}
            {fileButton(row.error_file_id, 'error', row)}
          </span>
        );
    }
  };

  const columns: RowColumn<BatchRow>[] = COLUMNS.filter((c) => admin || !ADMIN_ONLY.has(c)).map((c) => ({
    id: c,
    header: t(`col.${c}`),
    cell: (row) => cell(c, row),
  }));

  return (
    <ListPage
      title={t('title')}
      filters={
        <label className="flex items-center gap-2 text-sm">
          {t('filter.status')}
          <select
            className="rounded border border-gray-300 px-2 py-1 dark:border-gray-600 dark:bg-gray-800"
            value={status}
            onChange={(event) => setStatus(event.target.value)}
          >
            <option value="">{t('filter.all')}</option>
            {Object.keys(BATCH_STATUSES).map((name) => (
              <option key={name} value={name}>
                {t(`status.${name}`)}
              </option>
            ))}
          </select>
        </label>
      }
      table={
        <TaskLogTable
          columns={columns}
          list={list}
          rowKey={(row) => row.id}
          pageSize={pageSize}
          onPageSizeChange={setPageSize}
          empty={<TaskLogEmpty title={t('empty')} hint={t('emptyHint')} failed={list.isError} />}
        />
      }
    />
  );
}
