import { keepPreviousData, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import {
  FilterBar,
  ListPage,
  Toolbar,
  useColumnChoice,
  useFilterDraft,
  useKeySet,
  useListPage,
  useSheet,
} from '../../../components/data-table/index.ts';
import { Button, EmptyState, Input, Select, Switch } from '../../../components/ui/index.ts';
import { useQuotaDisplay } from '../../../lib/status.ts';
import { readStored, writeStored } from '../../../lib/storage.ts';
import { toast } from '../../../lib/toast.ts';
import {
  type ChannelSearch,
  type ChannelTagView,
  type ChannelView,
  channelsQueryKey,
  fetchChannels,
  fetchEnabledModels,
  fetchGroups,
} from '../api/channels.ts';
import { channelsSearch } from '../search.ts';
import {
  CHANNEL_COLUMNS,
  COLUMNS_STORAGE_KEY,
  ID_SORT_STORAGE_KEY,
  TAG_MODE_STORAGE_KEY,
} from '../validation.ts';
import { useChannelActions } from './channel-actions.ts';
import { BatchTagDialog, CopyChannelDialog, ModelTestDialog, TagEditDialog } from './channel-dialogs.tsx';
import { ChannelDrawer, type DrawerTarget } from './channel-drawer.tsx';
import { ChannelTable } from './channel-table.tsx';
import { TestAllBanner, useTestAll } from './test-all-progress.tsx';

/**
 * Manage channels (admin): search, table, quick edits, the edit drawer and the tag, column and test dialogs.
 * `open` opens the channel form at once (the /channel/add and /channel/edit/{id} addresses of spec 03);
 * `onFormClosed` runs when that form closes, so the address can return to /channel.
 */
export function ChannelsPage({
  open,
  onFormClosed,
}: {
  open?: DrawerTarget;
  onFormClosed?: () => void;
} = {}) {
  const { t } = useTranslation('channels');
  const queryClient = useQueryClient();
  const list = useListPage(channelsSearch, 'channels');
  const { keyword, group, model } = list.search;
  const filter = useFilterDraft({ keyword, group, model });
  const [prefs, setPrefs] = useState(() => ({
    idSort: readStored(ID_SORT_STORAGE_KEY) === 'true',
    tagMode: readStored(TAG_MODE_STORAGE_KEY) === 'true',
  }));
  const columns = useColumnChoice({
    storageKey: COLUMNS_STORAGE_KEY,
    columns: CHANNEL_COLUMNS,
    title: t('columns.title'),
    label: (c) => t(`col.${c}`),
    resetLabel: t('columns.reset'),
    resetVariant: 'ghost',
  });
  const selected = useKeySet<number>();
  const drawer = useSheet<DrawerTarget>(open);
  const [dialog, setDialog] = useState<
    | { kind: 'batchTag' }
    | { kind: 'tagEdit'; tag: ChannelTagView }
    | { kind: 'testModel'; channel: ChannelView }
    | { kind: 'copy'; channel: ChannelView }
    | null
  >(null);

  const query: ChannelSearch = { ...list.search, ...prefs, pageSize: list.pageSize };
  const channels = useQuery({
    queryKey: channelsQueryKey(query),
    queryFn: () => fetchChannels(query),
    placeholderData: keepPreviousData,
  });
  const groups = useQuery({ queryKey: ['groups'], queryFn: fetchGroups });
  const models = useQuery({ queryKey: ['channel-models-enabled'], queryFn: fetchEnabledModels });
  const display = useQuotaDisplay();
  const refresh = () => void queryClient.invalidateQueries({ queryKey: ['channels'] });
  const testAll = useTestAll(refresh);
  const actions = useChannelActions(refresh, selected);

  const toggleSetting = (key: 'idSort' | 'tagMode', on: boolean) => {
    writeStored(key === 'idSort' ? ID_SORT_STORAGE_KEY : TAG_MODE_STORAGE_KEY, String(on));
    setPrefs((p) => ({ ...p, [key]: on }));
    list.setPage(1);
  };

  const rows = channels.data?.items ?? [];
  const total = channels.data?.total ?? 0;
  const hasFilter = list.isFiltered;

  return (
    <ListPage
      title={t('title')}
      filters={
        <FilterBar
          onSubmit={() => list.apply(filter.draft)}
          submitLabel={t('search.submit')}
          className="mb-3 grid grid-cols-1 gap-2 sm:flex sm:flex-wrap sm:items-end"
        >
          <Input
            label={t('search.keyword')}
            placeholder={t('search.keywordPlaceholder')}
            {...filter.field('keyword')}
          />
          <Select
            label={t('search.group')}
            {...filter.field('group')}
            options={[
              { value: '', label: t('search.allGroups') },
              ...(groups.data ?? []).map((g) => ({ value: g, label: g })),
            ]}
          />
          <Input label={t('search.model')} list="channel-enabled-models" {...filter.field('model')} />
          <datalist id="channel-enabled-models">
            {(models.data ?? []).map((m) => (
              <option key={m} value={m} />
            ))}
          </datalist>
        </FilterBar>
      }
      summary={
        <>
          <Toolbar
            actions={[
              { label: t('toolbar.add'), onClick: () => drawer.open({ mode: 'create' }) },
              { label: t('toolbar.refresh'), variant: 'secondary', onClick: refresh },
              {
                label: t('toolbar.testAll'),
                variant: 'secondary',
                loading: testAll.running,
                onClick: () => void testAll.start(),
              },
              {
                label: t('toolbar.balanceAll'),
                variant: 'secondary',
                onClick: actions.refreshAllBalances,
              },
              { label: t('toolbar.deleteDisabled'), variant: 'danger', onClick: actions.deleteDisabled },
              {
                label: t('toolbar.deleteSelected'),
                variant: 'danger',
                onClick: () =>
                  selected.keys.size === 0
                    ? toast.warning(t('error.selectToDelete'))
                    : actions.deleteSelected(),
              },
              {
                label: t('toolbar.batchTag'),
                variant: 'secondary',
                onClick: () =>
                  selected.keys.size === 0
                    ? toast.warning(t('error.selectToTag'))
                    : setDialog({ kind: 'batchTag' }),
              },
              { label: t('toolbar.fix'), variant: 'secondary', onClick: actions.fix },
              { label: t('toolbar.columns'), variant: 'secondary', onClick: columns.open },
            ]}
          >
            <Switch
              checked={prefs.idSort}
              onChange={(on) => toggleSetting('idSort', on)}
              label={t('toolbar.idSort')}
            />
            <Switch
              checked={prefs.tagMode}
              onChange={(on) => toggleSetting('tagMode', on)}
              label={t('toolbar.tagMode')}
            />
            {selected.keys.size > 0 ? (
              <span className="text-sm text-gray-500">
                {t('toolbar.selected', { count: selected.keys.size })}
              </span>
            ) : null}
          </Toolbar>

          <TestAllBanner progress={testAll.progress} />
        </>
      }
      empty={
        !channels.isFetching && channels.data && rows.length === 0 ? (
          <EmptyState title={hasFilter ? t('empty.filtered') : t('empty.title')}>
            <p className="text-sm">{hasFilter ? t('empty.filteredHint') : t('empty.hint')}</p>
            {hasFilter ? null : (
              <Button onClick={() => drawer.open({ mode: 'create' })}>{t('toolbar.add')}</Button>
            )}
          </EmptyState>
        ) : undefined
      }
      paging={list.paging(total)}
      table={
        <ChannelTable
          rows={rows}
          loading={channels.isFetching && !channels.data}
          columns={columns.visible}
          selected={selected.keys}
          busyIds={actions.busy}
          display={display}
          onSelect={selected.set}
          {...actions.row}
          onPickTestModel={(c) => setDialog({ kind: 'testModel', channel: c })}
          onEdit={(c) => drawer.open({ mode: 'edit', id: c.id })}
          onCopy={(c) => setDialog({ kind: 'copy', channel: c })}
          onEditTag={(tag) => setDialog({ kind: 'tagEdit', tag })}
        />
      }
    >
      {drawer.of ? (
        <ChannelDrawer
          target={drawer.of}
          groups={groups.data ?? ['default']}
          onClose={() => {
            drawer.close();
            onFormClosed?.();
          }}
          onSaved={refresh}
        />
      ) : null}
      {dialog?.kind === 'batchTag' ? (
        <BatchTagDialog
          ids={[...selected.keys]}
          onClose={() => setDialog(null)}
          onDone={() => {
            selected.clear();
            refresh();
          }}
        />
      ) : null}
      {dialog?.kind === 'tagEdit' ? (
        <TagEditDialog
          tag={dialog.tag}
          groups={groups.data ?? []}
          onClose={() => setDialog(null)}
          onDone={refresh}
        />
      ) : null}
      {columns.dialog}
      {dialog?.kind === 'testModel' ? (
        <ModelTestDialog
          channel={dialog.channel}
          onClose={() => {
            setDialog(null);
            refresh();
          }}
        />
      ) : null}
      {dialog?.kind === 'copy' ? (
        <CopyChannelDialog channel={dialog.channel} onClose={() => setDialog(null)} onDone={refresh} />
      ) : null}
      {actions.dialog}
    </ListPage>
  );
}
