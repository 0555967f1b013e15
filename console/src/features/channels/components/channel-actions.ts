import { ChannelStatus } from '@turnpike/core/domain/closed-sets';
import { useTranslation } from 'react-i18next';
import { useListAction } from '../../../components/data-table/index.ts';
import { toast } from '../../../lib/toast.ts';
import {
  type ChannelTagView,
  type ChannelView,
  deleteChannel,
  deleteChannels,
  deleteDisabledChannels,
  editTag,
  fixChannels,
  patchChannel,
  setTagStatus,
  testChannel,
  updateAllBalances,
  updateBalance,
} from '../api/channels.ts';
import { checkTagPriority, checkTagWeight, parseRowPriority, parseRowWeight } from '../validation.ts';
import type { ChannelTableActions } from './channel-table.tsx';

/** The rows picked in the channel table, as the actions change them. */
interface Selection {
  readonly keys: ReadonlySet<number>;
  set(ids: number | readonly number[], on: boolean): void;
  clear(): void;
}

/**
 * What the channels page does to the server, row by row and for the whole list: quick edits, tests, balances, tag
 * edits and the confirmed deletes and fix. The `on…` members are the table's own props; `dialog` renders the
 * confirmation.
 */
export function useChannelActions(refresh: () => void, selected: Selection) {
  const { t } = useTranslation('channels');
  const action = useListAction(refresh);

  const quickEdit = (
    channel: ChannelView,
    patch: Partial<Pick<ChannelView, 'status' | 'priority' | 'weight'>>,
    done: string,
  ) =>
    void action.run(() => patchChannel(channel.id, patch), {
      done: t(done),
      busyKey: String(channel.id),
      refreshOnFailure: true,
    });

  /** Answers whether the text was taken: null from `parse` is refused and the field shows the stored value. */
  const numberEdit =
    (field: 'priority' | 'weight', parse: (text: string) => number | null) =>
    (channel: ChannelView, text: string) => {
      const value = parse(text);
      if (value === null) return false;
      quickEdit(channel, { [field]: value }, 'done.updated');
      return true;
    };

  /** Answers whether the text was taken; blank changes nothing, anything else that is not valid is refused. */
  const tagEdit = (field: 'priority' | 'weight') => (tag: ChannelTagView, text: string) => {
    if (!text.trim()) return false;
    const checked = field === 'priority' ? checkTagPriority(text) : checkTagWeight(text);
    if ('error' in checked) {
      toast.error(t(checked.error));
      return false;
    }
    void action.run(() => editTag({ tag: tag.tag, [field]: checked.value }), {
      done: t('done.updated'),
      refreshOnFailure: true,
    });
    return true;
  };

  const test = async (channel: ChannelView, model?: string) => {
    action.mark(`test-${channel.id}`, true);
    const outcome = await testChannel(channel.id, model);
    action.mark(`test-${channel.id}`, false);
    if (outcome.kind === 'unavailable') toast.warning(t('test.unavailable'));
    else if (outcome.kind === 'failed') toast.error(t('test.failed', { message: outcome.message }));
    else {
      toast.success(t('test.ok', { seconds: outcome.seconds.toFixed(2) }));
      refresh();
    }
  };

  const row = {
    onToggleStatus: (c) => {
      const enabled = c.status === ChannelStatus.Enabled;
      quickEdit(
        c,
        { status: enabled ? ChannelStatus.ManuallyDisabled : ChannelStatus.Enabled },
        enabled ? 'done.disabled' : 'done.enabled',
      );
    },
    onPriority: numberEdit('priority', parseRowPriority),
    onWeight: numberEdit('weight', parseRowWeight),
    onRefreshBalance: (c) =>
      void action.run(() => updateBalance(c.id), { done: t('done.balance'), busyKey: `balance-${c.id}` }),
    onTest: (c) => void test(c, c.test_model || undefined),
    onDelete: (c) =>
      action.confirm({
        danger: true,
        title: t('confirm.delete', { name: c.name }),
        message: t('confirm.irreversible'),
        call: () => deleteChannel(c.id),
        done: () => t('done.deleted', { count: 1 }),
        after: () => selected.set(c.id, false),
      }),
    onTagStatus: (tag, enabled) =>
      void action.run(() => setTagStatus(tag.tag, enabled), {
        done: t(enabled ? 'done.enabled' : 'done.disabled'),
        refreshOnFailure: true,
      }),
    onTagPriority: tagEdit('priority'),
    onTagWeight: tagEdit('weight'),
  } satisfies Partial<ChannelTableActions>;

  return {
    row,
    busy: action.busy,
    dialog: action.dialog,
    refreshAllBalances: () => void action.run(updateAllBalances, { done: t('done.balanceAll') }),
    deleteSelected: () =>
      action.confirm({
        danger: true,
        title: t('confirm.deleteSelected', { count: selected.keys.size }),
        message: t('confirm.irreversible'),
        call: () => deleteChannels([...selected.keys]),
        done: (count) => t('done.deleted', { count }),
        after: selected.clear,
      }),
    deleteDisabled: () =>
      action.confirm({
        danger: true,
        title: t('confirm.deleteDisabled'),
        message: t('confirm.irreversible'),
        call: deleteDisabledChannels,
        done: (count) => t('done.deletedDisabled', { count }),
      }),
    fix: () =>
      action.confirm({
        title: t('confirm.fix'),
        message: t('confirm.fixHint'),
        call: fixChannels,
        done: (count) => t('done.fixed', { count }),
      }),
  };
}
