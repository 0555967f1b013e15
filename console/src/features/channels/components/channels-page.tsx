import { keepPreviousData, useQuery, useQueryClient } from '@tanstack/react-query';
import { ChannelStatus } from '@turnpike/core/domain/closed-sets';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import {
  FilterBar,
  ListPage,
  useConfirm,
  useFilterDraft,
  useListPage,
  useSheet,
} from '../../../components/data-table/index.ts';
import { Button, EmptyState, Input, Select, Switch } from '../../../components/ui/index.ts';
import { useQuotaDisplay } from '../../../lib/status.ts';
import { readStored, readStoredJson, writeStored } from '../../../lib/storage.ts';
import { toast } from '../../../lib/toast.ts';
import {
  type ChannelSearch,
  type ChannelTagView,
  type ChannelView,
  channelsQueryKey,
  deleteChannel,
  deleteChannels,
  deleteDisabledChannels,
  editTag,
  fetchChannels,
  fetchEnabledModels,
  fetchGroups,
  fixChannels,
  patchChannel,
  setTagStatus,
  testChannel,
  updateAllBalances,
  updateBalance,
} from '../api/channels.ts';
import { channelsSearch } from '../search.ts';
import {
  CHANNEL_COLUMNS,
  type ChannelColumn,
  COLUMNS_STORAGE_KEY,
  checkTagPriority,
  checkTagWeight,
  ID_SORT_STORAGE_KEY,
  parseRowPriority,
  parseRowWeight,
  TAG_MODE_STORAGE_KEY,
} from '../validation.ts';
import {
  BatchTagDialog,
  ColumnSettingsDialog,
  CopyChannelDialog,
  ModelTestDialog,
  TagEditDialog,
} from './channel-dialogs.tsx';
import { ChannelDrawer, type DrawerTarget } from './channel-drawer.tsx';
import { ChannelTable } from './channel-table.tsx';
import { TestAllBanner, useTestAll } from './test-all-progress.tsx';

function storedColumns(): Record<ChannelColumn, boolean> {
  const saved = readStoredJson<Partial<Record<ChannelColumn, boolean>>>(COLUMNS_STORAGE_KEY) ?? {};
  return Object.fromEntries(CHANNEL_COLUMNS.map((c) => [c, saved[c] !== false])) as Record<
    ChannelColumn,
    boolean
  >;
}

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
  const [columns, setColumns] = useState(storedColumns);
  const [selected, setSelected] = useState<ReadonlySet<number>>(new Set());
  const [busyIds, setBusyIds] = useState<ReadonlySet<string>>(new Set());
  const drawer = useSheet<DrawerTarget>(open);
  const confirm = useConfirm();
  const [dialog, setDialog] = useState<
    | { kind: 'batchTag' }
    | { kind: 'columns' }
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

  const mark = (key: string, on: boolean) =>
    setBusyIds((s) => {
      const next = new Set(s);
      if (on) next.add(key);
      else next.delete(key);
      return next;
    });

  const quickEdit = async (
    channel: ChannelView,
    patch: Partial<Pick<ChannelView, 'status' | 'priority' | 'weight'>>,
    done: string,
  ) => {
    mark(String(channel.id), true);
    try {
      await patchChannel(channel.id, patch);
      toast.success(t(done));
    } catch {
      // the request client has shown the message
    } finally {
      mark(String(channel.id), false);
      refresh();
    }
  };

  const runTest = async (channel: ChannelView, model?: string) => {
    mark(`test-${channel.id}`, true);
    const outcome = await testChannel(channel.id, model);
    mark(`test-${channel.id}`, false);
    if (outcome.kind === 'unavailable') toast.warning(t('test.unavailable'));
    else if (outcome.kind === 'failed') toast.error(t('test.failed', { message: outcome.message }));
    else {
      toast.success(t('test.ok', { seconds: outcome.seconds.toFixed(2) }));
      refresh();
    }
  };

  const refreshBalance = async (channel: ChannelView) => {
    mark(`balance-${channel.id}`, true);
    try {
      await updateBalance(channel.id);
      toast.success(t('done.balance'));
      refresh();
    } catch {
      // shown by the request client
    } finally {
      mark(`balance-${channel.id}`, false);
    }
  };

  const refreshAllBalances = async () => {
    try {
      await updateAllBalances();
      toast.success(t('done.balanceAll'));
      refresh();
    } catch {
      // shown by the request client
    }
  };

  /** Answers whether the text was taken; blank changes nothing, anything else that is not valid is refused. */
  const tagQuickEdit = (tag: ChannelTagView, field: 'priority' | 'weight', text: string): boolean => {
    if (!text.trim()) return false;
    const checked = field === 'priority' ? checkTagPriority(text) : checkTagWeight(text);
    if ('error' in checked) {
      toast.error(t(checked.error));
      return false;
    }
    void sendTagEdit(tag, field, checked.value);
    return true;
  };

  const sendTagEdit = async (tag: ChannelTagView, field: 'priority' | 'weight', value: number) => {
    try {
      await editTag({ tag: tag.tag, [field]: value });
      toast.success(t('done.updated'));
    } catch {
      // shown by the request client
    } finally {
      refresh();
    }
  };

  const askDelete = (channel: ChannelView) =>
    confirm.ask({
      danger: true,
      title: t('confirm.delete', { name: channel.name }),
      message: t('confirm.irreversible'),
      run: async () => {
        await deleteChannel(channel.id);
        toast.success(t('done.deleted', { count: 1 }));
        setSelected((s) => {
          const next = new Set(s);
          next.delete(channel.id);
          return next;
        });
        refresh();
      },
    });
  const askDeleteSelected = () =>
    confirm.ask({
      danger: true,
      title: t('confirm.deleteSelected', { count: selected.size }),
      message: t('confirm.irreversible'),
      run: async () => {
        const count = await deleteChannels([...selected]);
        toast.success(t('done.deleted', { count }));
        setSelected(new Set());
        refresh();
      },
    });
  const askDeleteDisabled = () =>
    confirm.ask({
      danger: true,
      title: t('confirm.deleteDisabled'),
      message: t('confirm.irreversible'),
      run: async () => {
        const count = await deleteDisabledChannels();
        toast.success(t('done.deletedDisabled', { count }));
        refresh();
      },
    });
  const askFix = () =>
    confirm.ask({
      title: t('confirm.fix'),
      message: t('confirm.fixHint'),
      run: async () => {
        const count = await fixChannels();
        toast.success(t('done.fixed', { count }));
        refresh();
      },
    });

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
          <div className="mb-3 flex flex-wrap items-center gap-2">
            <Button onClick={() => drawer.open({ mode: 'create' })}>{t('toolbar.add')}</Button>
            <Button variant="secondary" onClick={refresh}>
              {t('toolbar.refresh')}
            </Button>
            <Button variant="secondary" loading={testAll.running} onClick={() => void testAll.start()}>
              {t('toolbar.testAll')}
            </Button>
            <Button variant="secondary" onClick={() => void refreshAllBalances()}>
              {t('toolbar.balanceAll')}
            </Button>
            <Button variant="danger" onClick={askDeleteDisabled}>
              {t('toolbar.deleteDisabled')}
            </Button>
            <Button
              variant="danger"
              onClick={() =>
                selected.size === 0 ? toast.warning(t('error.selectToDelete')) : askDeleteSelected()
              }
            >
              {t('toolbar.deleteSelected')}
            </Button>
            <Button
              variant="secondary"
              onClick={() =>
                selected.size === 0 ? toast.warning(t('error.selectToTag')) : setDialog({ kind: 'batchTag' })
              }
            >
              {t('toolbar.batchTag')}
            </Button>
            <Button variant="secondary" onClick={askFix}>
              {t('toolbar.fix')}
            </Button>
            <Button variant="secondary" onClick={() => setDialog({ kind: 'columns' })}>
              {t('toolbar.columns')}
            </Button>
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
            {selected.size > 0 ? (
              <span className="text-sm text-gray-500">{t('toolbar.selected', { count: selected.size })}</span>
            ) : null}
          </div>

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
          columns={columns}
          selected={selected}
          busyIds={busyIds}
          display={display}
          onSelect={(ids, on) =>
            setSelected((s) => {
              const next = new Set(s);
              for (const id of ids) {
                if (on) next.add(id);
                else next.delete(id);
              }
              return next;
            })
          }
          onToggleStatus={(c) =>
            void quickEdit(
              c,
              {
                status:
                  c.status === ChannelStatus.Enabled ? ChannelStatus.ManuallyDisabled : ChannelStatus.Enabled,
              },
              c.status === ChannelStatus.Enabled ? 'done.disabled' : 'done.enabled',
            )
          }
          onPriority={(c, text) => {
            const priority = parseRowPriority(text);
            if (priority === null) return false;
            void quickEdit(c, { priority }, 'done.updated');
            return true;
          }}
          onWeight={(c, text) => {
            const weight = parseRowWeight(text);
            if (weight === null) return false;
            void quickEdit(c, { weight }, 'done.updated');
            return true;
          }}
          onRefreshBalance={(c) => void refreshBalance(c)}
          onTest={(c) => void runTest(c, c.test_model || undefined)}
          onPickTestModel={(c) => setDialog({ kind: 'testModel', channel: c })}
          onEdit={(c) => drawer.open({ mode: 'edit', id: c.id })}
          onCopy={(c) => setDialog({ kind: 'copy', channel: c })}
          onDelete={askDelete}
          onTagStatus={(tag, enabled) =>
            void setTagStatus(tag.tag, enabled)
              .then(() => toast.success(t(enabled ? 'done.enabled' : 'done.disabled')))
              .catch(() => {})
              .finally(refresh)
          }
          onTagPriority={(tag, text) => tagQuickEdit(tag, 'priority', text)}
          onTagWeight={(tag, text) => tagQuickEdit(tag, 'weight', text)}
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
          ids={[...selected]}
          onClose={() => setDialog(null)}
          onDone={() => {
            setSelected(new Set());
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
      {dialog?.kind === 'columns' ? (
        <ColumnSettingsDialog
          columns={columns}
          onClose={() => setDialog(null)}
          onSave={(next) => {
            writeStored(COLUMNS_STORAGE_KEY, JSON.stringify(next));
            setColumns(next);
          }}
        />
      ) : null}
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
      {confirm.dialog}
    </ListPage>
  );
}
