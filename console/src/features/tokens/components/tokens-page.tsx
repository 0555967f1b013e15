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
import { useQuotaDisplay, useStatus } from '../../../lib/status.ts';
import { readStored, StorageKey } from '../../../lib/storage.ts';
import { toast } from '../../../lib/toast.ts';
import { isScriptLink, parseChatLinks } from '../../chat/links.ts';
import { QuotaWindowStates } from '../../quota-windows/components/window-states.tsx';
import { deleteToken, fetchTokens, setTokenStatus, type TokenRow, tokensQueryKey } from '../api/tokens.ts';
import { tokensSearch } from '../search.ts';
import { NEVER_EXPIRES, TokenStatus, toggleTarget, tokenStatusName } from '../validation.ts';
import { ChatMenu } from './chat-menu.tsx';
import { TokenSheet } from './token-sheet.tsx';

const statusColor = {
  enabled: 'green',
  limited: 'blue',
  disabled: 'red',
  expired: 'yellow',
  exhausted: 'gray',
  unknown: 'gray',
} as const;

/** The signed-in user's API tokens: search, copy, create/edit, enable/disable and delete. */
export function TokensPage() {
  const { t } = useTranslation('tokens');
  const status = useStatus();
  const queryClient = useQueryClient();
  const { copy, dialog: copyDialog } = useCopy();
  const list = useListPage(tokensSearch, 'tokens');
  // The key searched for is kept out of the URL (search.ts); it holds with the keyword it was applied with.
  const [keySearch, setKeySearch] = useState({ keyword: '', token: '' });
  const token = keySearch.keyword === list.search.keyword ? keySearch.token : '';
  const filter = useFilterDraft({ keyword: list.search.keyword, token });
  const sheet = useSheet<number | null>();
  const confirm = useConfirm();

  const query = { keyword: list.search.keyword, token, page: list.search.page, pageSize: list.pageSize };
  const tokens = useQuery({
    queryKey: tokensQueryKey(query),
    queryFn: () => fetchTokens(query),
    placeholderData: keepPreviousData,
  });
  const rows = tokens.data?.items ?? [];
  const selection = useRowSelection(rows, {
    all: t('selectAll'),
    row: (row) => t('select', { name: row.name }),
  });
  const display = useQuotaDisplay();
  const refresh = () => void queryClient.invalidateQueries({ queryKey: ['tokens'] });
  const parsedLinks = parseChatLinks(status.data?.chats ?? readStored(StorageKey.Chats));
  // null: a broken configuration; links that would run script are never offered.
  const chatLinks =
    parsedLinks.kind === 'ok' ? parsedLinks.links.filter((link) => !isScriptLink(link.template)) : null;
  const serverAddress = status.data?.server_address ?? '';

  const submitSearch = () => {
    selection.clear();
    setKeySearch(filter.draft);
    list.apply({ keyword: filter.draft.keyword });
  };

  const copySelected = () => {
    const chosen = selection.chosen;
    if (chosen.length === 0) {
      toast.warning(t('error.selectOne'));
      return;
    }
    void copy(chosen.map((r) => `${r.name}    ${r.key}`).join('\n'));
  };

  const toggle = async (row: TokenRow) => {
    const next = toggleTarget(row.status);
    try {
      await setTokenStatus(row.id, next);
      toast.success(next === TokenStatus.Enabled ? t('enabledDone') : t('disabledDone'));
      refresh();
    } catch {
      // the request client has shown the message
    }
  };

  const askDelete = (token: TokenRow) =>
    confirm.ask({
      danger: true,
      title: t('confirmDelete', { name: token.name }),
      message: t('confirmDeleteMessage'),
      run: async () => {
        await deleteToken(token.id);
        toast.success(t('deleted'));
        selection.remove(token.id);
        refresh();
      },
    });

  const columns: TableColumn<TokenRow>[] = [
    selection.column,
    { accessorKey: 'name', header: t('col.name') },
    {
      id: 'status',
      header: t('col.status'),
      cell: ({ row }) => {
        const name = tokenStatusName(row.original.status, row.original.model_limits_enabled);
        return <Tag color={statusColor[name]}>{t(`status.${name}`)}</Tag>;
      },
    },
    {
      id: 'used',
      header: t('col.used'),
      cell: ({ row }) => formatQuota(row.original.used_quota, display),
    },
    {
      id: 'remain',
      header: t('col.remain'),
      cell: ({ row }) =>
        row.original.unlimited_quota ? (
          <Tag color="purple">{t('unlimited')}</Tag>
        ) : (
          formatQuota(row.original.remain_quota, display)
        ),
    },
    {
      id: 'windows',
      header: t('col.windows'),
      cell: ({ row }) =>
        row.original.quota_window_states?.length ? (
          <QuotaWindowStates states={row.original.quota_window_states} display={display} compact />
        ) : (
          '-'
        ),
    },
    { id: 'group', header: t('col.group'), cell: ({ row }) => row.original.group || t('field.groupDefault') },
    {
      id: 'created',
      header: t('col.created'),
      cell: ({ row }) => formatTimestamp(row.original.created_time),
    },
    {
      id: 'expires',
      header: t('col.expires'),
      cell: ({ row }) =>
        row.original.expired_time === NEVER_EXPIRES ? t('never') : formatTimestamp(row.original.expired_time),
    },
    {
      id: 'actions',
      header: t('col.actions'),
      cell: ({ row }) => {
        const token = row.original;
        const enable = toggleTarget(token.status) === TokenStatus.Enabled;
        return (
          <div className="flex gap-1">
            <Button
              size="sm"
              variant="secondary"
              aria-label={`${t('action.copy')} ${token.name}`}
              onClick={() => void copy(token.key)}
            >
              {t('action.copy')}
            </Button>
            <ChatMenu
              tokenName={token.name}
              tokenKey={token.key}
              links={chatLinks}
              serverAddress={serverAddress}
            />
            <Button
              size="sm"
              variant="secondary"
              aria-label={`${enable ? t('action.enable') : t('action.disable')} ${token.name}`}
              onClick={() => void toggle(token)}
            >
              {enable ? t('action.enable') : t('action.disable')}
            </Button>
            <Button
              size="sm"
              variant="secondary"
              aria-label={`${t('action.edit')} ${token.name}`}
              onClick={() => sheet.open(token.id)}
            >
              {t('action.edit')}
            </Button>
            <Button
              size="sm"
              variant="danger"
              aria-label={`${t('action.delete')} ${token.name}`}
              onClick={() => askDelete(token)}
            >
              {t('action.delete')}
            </Button>
          </div>
        );
      },
    },
  ];

  const isEmpty = !tokens.isLoading && rows.length === 0 && !list.isFiltered && !token;

  return (
    <ListPage
      title={t('title')}
      intro={
        <p
          role="note"
          className="mb-4 rounded bg-yellow-50 p-3 text-sm text-yellow-800 dark:bg-yellow-900/30 dark:text-yellow-200"
        >
          {t('ownUseWarning')}
        </p>
      }
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
          <Input label={t('search.keyword')} {...filter.field('keyword')} />
          <Input label={t('search.key')} {...filter.field('token')} />
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
      loading={tokens.isFetching && !tokens.data}
      paging={list.paging(tokens.data?.total ?? 0, selection.clear)}
    >
      {sheet.isOpen ? <TokenSheet id={sheet.of ?? null} onClose={sheet.close} onSaved={refresh} /> : null}
      {confirm.dialog}
      {copyDialog}
    </ListPage>
  );
}
