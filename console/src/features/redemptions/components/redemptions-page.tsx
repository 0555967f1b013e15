import { keepPreviousData, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { useTranslation } from 'react-i18next';
import {
  Button,
  ConfirmDialog,
  DataTable,
  EmptyState,
  Input,
  type TableColumn,
  Tag,
  usePageSize,
} from '../../../components/ui/index.ts';
import { useRowSelection } from '../../../components/ui/row-selection.tsx';
import { useCopy } from '../../../components/ui/use-copy.tsx';
import { formatQuota, formatTimestamp } from '../../../lib/format.ts';
import { useQuotaDisplay } from '../../../lib/status.ts';
import { toast } from '../../../lib/toast.ts';
import {
  deleteRedemption,
  fetchRedemptions,
  type RedemptionRow,
  type RedemptionSearch,
  redemptionsQueryKey,
  setRedemptionStatus,
} from '../api/redemptions.ts';
import { downloadTextFile } from '../download.ts';
import {
  canEdit,
  codesFile,
  copyText,
  RedemptionStatus,
  redemptionStatusName,
  toggleTarget,
} from '../validation.ts';
import { CreatedCodes } from './created-codes.tsx';
import { RedemptionSheet } from './redemption-sheet.tsx';

const statusColor = { unused: 'green', disabled: 'red', used: 'gray', unknown: 'gray' } as const;

/** Admin management of redemption codes: search, create (with a .txt download), edit, enable/disable, delete. */
export function RedemptionsPage() {
  const { t } = useTranslation('redemptions');
  const queryClient = useQueryClient();
  const { copy, dialog: copyDialog } = useCopy();
  const [pageSize, setPageSize] = usePageSize('redemptions');
  const [keyword, setKeyword] = useState('');
  const [search, setSearch] = useState<Omit<RedemptionSearch, 'pageSize'>>({ keyword: '', page: 1 });
  const [sheet, setSheet] = useState<{ id: number | null } | null>(null);
  const [created, setCreated] = useState<{ name: string; keys: string[] } | null>(null);
  const [deleting, setDeleting] = useState<RedemptionRow | null>(null);
  const [busy, setBusy] = useState(false);

  const query = { ...search, pageSize };
  const codes = useQuery({
    queryKey: redemptionsQueryKey(query),
    queryFn: () => fetchRedemptions(query),
    placeholderData: keepPreviousData,
  });
  const rows = codes.data?.items ?? [];
  const label = (row: RedemptionRow) => `${row.name} #${row.id}`;
  const selection = useRowSelection(rows, {
    all: t('selectAll'),
    row: (row) => t('select', { name: label(row) }),
  });
  const display = useQuotaDisplay();
  const refresh = () => void queryClient.invalidateQueries({ queryKey: ['redemptions'] });

  const submitSearch = (e: FormEvent) => {
    e.preventDefault();
    selection.clear();
    setSearch({ keyword, page: 1 });
  };

  const download = (batch: { name: string; keys: string[] }) => {
    const file = codesFile(batch.name, batch.keys);
    downloadTextFile(file.filename, file.text);
  };

  const onCreated = (name: string, keys: string[]) => {
    const batch = { name, keys };
    download(batch);
    setCreated(batch);
    setSearch((s) => ({ ...s, page: 1 }));
    refresh();
  };

  const copySelected = () => {
    const chosen = selection.chosen;
    if (chosen.length === 0) {
      toast.warning(t('error.selectOne'));
      return;
    }
    void copy(copyText(chosen));
  };

  const toggle = async (row: RedemptionRow) => {
    const next = toggleTarget(row.status);
    if (next === null) return;
    try {
      await setRedemptionStatus(row.id, next);
      toast.success(next === RedemptionStatus.Unused ? t('enabledDone') : t('disabledDone'));
      refresh();
    } catch {
      // the request client has shown the message
    }
  };

  const confirmDelete = async () => {
    if (!deleting) return;
    setBusy(true);
    try {
      await deleteRedemption(deleting.id);
      toast.success(t('deleted'));
      selection.remove(deleting.id);
      // deleting the last row of a page goes back one page
      if (rows.length === 1 && search.page > 1) setSearch((s) => ({ ...s, page: s.page - 1 }));
      refresh();
    } catch {
      // the request client has shown the message
    } finally {
      setBusy(false);
      setDeleting(null);
    }
  };

  const columns: TableColumn<RedemptionRow>[] = [
    selection.column,
    { accessorKey: 'id', header: t('col.id') },
    { accessorKey: 'name', header: t('col.name') },
    {
      id: 'status',
      header: t('col.status'),
      cell: ({ row }) => {
        const name = redemptionStatusName(row.original.status);
        return <Tag color={statusColor[name]}>{t(`status.${name}`)}</Tag>;
      },
    },
    { id: 'quota', header: t('col.quota'), cell: ({ row }) => formatQuota(row.original.quota, display) },
    {
      id: 'created',
      header: t('col.created'),
      cell: ({ row }) => formatTimestamp(row.original.created_time),
    },
    {
      id: 'redeemedBy',
      header: t('col.redeemedBy'),
      cell: ({ row }) => (row.original.used_user_id ? t('userId', { id: row.original.used_user_id }) : '-'),
    },
    {
      id: 'redeemed',
      header: t('col.redeemed'),
      cell: ({ row }) => formatTimestamp(row.original.redeemed_time),
    },
    {
      id: 'actions',
      header: t('col.actions'),
      cell: ({ row }) => {
        const code = row.original;
        const next = toggleTarget(code.status);
        const enable = next !== RedemptionStatus.Disabled;
        const toggleText = enable ? t('action.enable') : t('action.disable');
        return (
          <div className="flex gap-1">
            <Button
              size="sm"
              variant="secondary"
              aria-label={`${t('action.copy')} ${label(code)}`}
              onClick={() => void copy(code.key)}
            >
              {t('action.copy')}
            </Button>
            <Button
              size="sm"
              variant="secondary"
              disabled={next === null}
              title={next === null ? t('usedIsFinal') : undefined}
              aria-label={`${toggleText} ${label(code)}`}
              onClick={() => void toggle(code)}
            >
              {toggleText}
            </Button>
            <Button
              size="sm"
              variant="secondary"
              disabled={!canEdit(code.status)}
              title={canEdit(code.status) ? undefined : t('editOnlyUnused')}
              aria-label={`${t('action.edit')} ${label(code)}`}
              onClick={() => setSheet({ id: code.id })}
            >
              {t('action.edit')}
            </Button>
            <Button
              size="sm"
              variant="danger"
              aria-label={`${t('action.delete')} ${label(code)}`}
              onClick={() => setDeleting(code)}
            >
              {t('action.delete')}
            </Button>
          </div>
        );
      },
    },
  ];

  const isEmpty = !codes.isLoading && !codes.isError && rows.length === 0 && !search.keyword;

  return (
    <section>
      <h1 className="mb-4 text-xl font-semibold">{t('title')}</h1>
      <form onSubmit={submitSearch} className="mb-4 flex flex-wrap items-end gap-2">
        <div className="w-full sm:w-72">
          <Input
            label={t('search.keyword')}
            placeholder={t('search.placeholder')}
            value={keyword}
            onChange={(e) => setKeyword(e.target.value)}
          />
        </div>
        <Button type="submit">{t('search.submit')}</Button>
        <Button variant="secondary" onClick={() => setSheet({ id: null })}>
          {t('add')}
        </Button>
        <Button variant="secondary" onClick={copySelected}>
          {t('copySelected')}
        </Button>
      </form>
      {isEmpty ? (
        <EmptyState title={t('empty.title')}>
          <p className="text-sm">{t('empty.description')}</p>
          <Button onClick={() => setSheet({ id: null })}>{t('add')}</Button>
        </EmptyState>
      ) : (
        <DataTable
          columns={columns}
          data={rows}
          loading={codes.isFetching && !codes.data}
          page={search.page}
          pageSize={pageSize}
          total={codes.data?.total ?? 0}
          onPageChange={(page) => {
            selection.clear();
            setSearch((s) => ({ ...s, page }));
          }}
          onPageSizeChange={(size) => {
            setPageSize(size);
            selection.clear();
            setSearch((s) => ({ ...s, page: 1 }));
          }}
          rowKey={(r) => r.id}
        />
      )}
      {sheet ? (
        <RedemptionSheet
          id={sheet.id}
          display={display}
          onClose={() => setSheet(null)}
          onSaved={refresh}
          onCreated={onCreated}
        />
      ) : null}
      <CreatedCodes
        created={created}
        onCopy={(text) => void copy(text)}
        onDownload={() => created && download(created)}
        onClose={() => setCreated(null)}
      />
      <ConfirmDialog
        open={deleting !== null}
        danger
        loading={busy}
        title={t('confirmDelete', { name: deleting ? label(deleting) : '' })}
        message={t('confirmDeleteMessage')}
        onCancel={() => setDeleting(null)}
        onConfirm={() => void confirmDelete()}
      />
      {copyDialog}
    </section>
  );
}
