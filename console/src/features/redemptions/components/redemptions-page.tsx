import { keepPreviousData, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import {
  FilterBar,
  ListPage,
  type TableColumn,
  useConfirm,
  useFilterDraft,
  useListPage,
  useRowSelection,
  useSheet,
} from '../../../components/data-table/index.ts';
import { Button, EmptyState, Input, Tag } from '../../../components/ui/index.ts';
import { useCopy } from '../../../components/ui/use-copy.tsx';
import { formatQuota, formatTimestamp } from '../../../lib/format.ts';
import { useQuotaDisplay } from '../../../lib/status.ts';
import { toast } from '../../../lib/toast.ts';
import {
  deleteRedemption,
  fetchRedemptions,
  type RedemptionRow,
  redemptionsQueryKey,
  setRedemptionStatus,
} from '../api/redemptions.ts';
import { downloadTextFile } from '../download.ts';
import { redemptionsSearch } from '../search.ts';
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
  const list = useListPage(redemptionsSearch, 'redemptions');
  const filter = useFilterDraft({ keyword: list.search.keyword });
  const sheet = useSheet<number | null>();
  const confirm = useConfirm();
  const [created, setCreated] = useState<{ name: string; keys: string[] } | null>(null);

  const query = { ...list.search, pageSize: list.pageSize };
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

  const submitSearch = () => {
    selection.clear();
    list.apply(filter.draft);
  };

  const download = (batch: { name: string; keys: string[] }) => {
    const file = codesFile(batch.name, batch.keys);
    downloadTextFile(file.filename, file.text);
  };

  const onCreated = (name: string, keys: string[]) => {
    const batch = { name, keys };
    download(batch);
    setCreated(batch);
    list.setPage(1);
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

  const askDelete = (code: RedemptionRow) =>
    confirm.ask({
      danger: true,
      title: t('confirmDelete', { name: label(code) }),
      message: t('confirmDeleteMessage'),
      run: async () => {
        await deleteRedemption(code.id);
        toast.success(t('deleted'));
        selection.remove(code.id);
        // deleting the last row of a page goes back one page
        if (rows.length === 1 && list.search.page > 1) list.setPage(list.search.page - 1);
        refresh();
      },
    });

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
              onClick={() => sheet.open(code.id)}
            >
              {t('action.edit')}
            </Button>
            <Button
              size="sm"
              variant="danger"
              aria-label={`${t('action.delete')} ${label(code)}`}
              onClick={() => askDelete(code)}
            >
              {t('action.delete')}
            </Button>
          </div>
        );
      },
    },
  ];

  const isEmpty = !codes.isLoading && !codes.isError && rows.length === 0 && !list.isFiltered;

  return (
    <ListPage
      title={t('title')}
      filters={
        <FilterBar
          onSubmit={submitSearch}
          submitLabel={t('search.submit')}
          actions={
            <>
              <Button variant="secondary" onClick={() => sheet.open(null)}>
                {t('add')}
              </Button>
              <Button variant="secondary" onClick={copySelected}>
                {t('copySelected')}
              </Button>
            </>
          }
        >
          <div className="w-full sm:w-72">
            <Input
              label={t('search.keyword')}
              placeholder={t('search.placeholder')}
              {...filter.field('keyword')}
            />
          </div>
        </FilterBar>
      }
      empty={
        isEmpty ? (
          <EmptyState title={t('empty.title')}>
            <p className="text-sm">{t('empty.description')}</p>
            <Button onClick={() => sheet.open(null)}>{t('add')}</Button>
          </EmptyState>
        ) : undefined
      }
      columns={columns}
      rows={rows}
      rowKey={(r) => r.id}
      loading={codes.isFetching && !codes.data}
      paging={list.paging(codes.data?.total ?? 0, selection.clear)}
    >
      {sheet.isOpen ? (
        <RedemptionSheet
          id={sheet.of ?? null}
          display={display}
          onClose={sheet.close}
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
      {confirm.dialog}
      {copyDialog}
    </ListPage>
  );
}
