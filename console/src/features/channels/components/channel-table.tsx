import { ChannelStatus } from '@turnpike/core/domain/closed-sets';
import { findProviderType } from '@turnpike/core/providers/catalogue';
import { Fragment, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { TableState } from '../../../components/data-table/index.ts';
import { Button, cx, Tag } from '../../../components/ui/index.ts';
import { formatQuota, formatTimestamp, type QuotaDisplay } from '../../../lib/format.ts';
import { type ChannelRow, type ChannelTagView, type ChannelView, isTagRow } from '../api/channels.ts';
import { autoDisabledInfo, type ChannelColumn, responseTimeColor, splitList } from '../validation.ts';
import { ManagedBadge } from './managed-badge.tsx';

const timeClass = {
  gray: 'bg-gray-100 text-gray-700 dark:bg-gray-800 dark:text-gray-300',
  green: 'bg-green-100 text-green-800 dark:bg-green-900/40 dark:text-green-300',
  lime: 'bg-lime-100 text-lime-800 dark:bg-lime-900/40 dark:text-lime-300',
  yellow: 'bg-yellow-100 text-yellow-800 dark:bg-yellow-900/40 dark:text-yellow-300',
  red: 'bg-red-100 text-red-800 dark:bg-red-900/40 dark:text-red-300',
} as const;

export interface ChannelTableActions {
  onToggleStatus: (channel: ChannelView) => void;
  /** Answers false when the text was not taken (blank or not a number): the field shows the stored value again. */
  onPriority: (channel: ChannelView, text: string) => boolean;
  onWeight: (channel: ChannelView, text: string) => boolean;
  onRefreshBalance: (channel: ChannelView) => void;
  onTest: (channel: ChannelView) => void;
  onPickTestModel: (channel: ChannelView) => void;
  onEdit: (channel: ChannelView) => void;
  onCopy: (channel: ChannelView) => void;
  onDelete: (channel: ChannelView) => void;
  onTagStatus: (tag: ChannelTagView, enabled: boolean) => void;
  onTagPriority: (tag: ChannelTagView, text: string) => boolean;
  onTagWeight: (tag: ChannelTagView, text: string) => boolean;
  onEditTag: (tag: ChannelTagView) => void;
}

export interface ChannelTableProps extends ChannelTableActions {
  rows: ChannelRow[];
  loading: boolean;
  columns: Record<ChannelColumn, boolean>;
  selected: ReadonlySet<number>;
  onSelect: (ids: number[], on: boolean) => void;
  busyIds: ReadonlySet<string>;
  display: QuotaDisplay;
}

/**
 * A number field that reports its text when it loses focus (or on Enter) and the text changed; text the page does
 * not take is replaced by the stored value again.
 */
function InlineNumber({
  label,
  value,
  min,
  onCommit,
}: {
  label: string;
  value: number | null;
  min?: number;
  onCommit: (text: string) => boolean;
}) {
  const initial = value === null ? '' : String(value);
  const [text, setText] = useState(initial);
  const [seen, setSeen] = useState(initial);
  if (seen !== initial) {
    // the row was refreshed from the server
    setSeen(initial);
    setText(initial);
  }
  const commit = () => {
    if (text !== initial && !onCommit(text)) setText(initial);
  };
  return (
    <input
      type="number"
      aria-label={label}
      min={min}
      value={text}
      onChange={(e) => setText(e.target.value)}
      onBlur={commit}
      onKeyDown={(e) => {
        if (e.key === 'Enter') (e.target as HTMLInputElement).blur();
      }}
      className="w-20 rounded border border-gray-300 bg-transparent px-2 py-1 text-sm dark:border-gray-600"
    />
  );
}

function StatusTag({ channel }: { channel: ChannelView }) {
  const { t } = useTranslation('channels');
  if (channel.status === ChannelStatus.Enabled) return <Tag color="green">{t('status.enabled')}</Tag>;
  if (channel.status === ChannelStatus.ManuallyDisabled) return <Tag color="red">{t('status.disabled')}</Tag>;
  if (channel.status === ChannelStatus.AutoDisabled) {
    const info = autoDisabledInfo(channel.other_info);
    const tip = info
      ? t('status.autoTip', {
          reason: info.reason || t('status.noReason'),
          time: formatTimestamp(info.time),
        })
      : t('status.autoTipUnknown');
    return (
      <span className="group relative inline-flex" title={tip}>
        <Tag color="yellow">{t('status.auto')}</Tag>
        <span
          role="tooltip"
          className="pointer-events-none absolute top-full left-0 z-10 mt-1 hidden w-64 whitespace-normal rounded bg-gray-900 px-2 py-1 text-xs text-white group-hover:block"
        >
          {tip}
        </span>
      </span>
    );
  }
  return <Tag>{t('status.unknown')}</Tag>;
}

/** DeepSeek reports its balance in yuan; the others in dollars. */
const balanceText = (c: ChannelView) =>
  findProviderType(c.type)?.balance === 'deepseek' ? `¥${c.balance.toFixed(2)}` : `$${c.balance.toFixed(2)}`;

function ResponseTime({ ms }: { ms: number }) {
  const { t } = useTranslation('channels');
  const color = responseTimeColor(ms);
  return (
    <span
      data-color={color}
      className={cx('inline-flex rounded px-2 py-0.5 text-xs font-medium', timeClass[color])}
    >
      {ms > 0 ? t('time.seconds', { seconds: (ms / 1000).toFixed(2) }) : t('time.untested')}
    </span>
  );
}

/** The channel table: plain rows, or tag rows that expand to their channels. */
export function ChannelTable(props: ChannelTableProps) {
  const { t } = useTranslation('channels');
  const { rows, loading, columns, selected, onSelect, busyIds, display } = props;
  const [open, setOpen] = useState<ReadonlySet<string>>(new Set());
  const pageIds = rows.flatMap((r) => (isTagRow(r) ? r.children.map((c) => c.id) : [r.id]));
  const allSelected = pageIds.length > 0 && pageIds.every((id) => selected.has(id));
  const show = (c: ChannelColumn) => columns[c];

  const channelRow = (c: ChannelView, child: boolean) => {
    const busy = busyIds.has(String(c.id));
    // A channel Kubernetes owns is read-only here: the server would refuse the change anyway.
    const managed = c.managed_by ?? null;
    const readOnlyTitle = managed ? t('managed.readOnly') : undefined;
    return (
      <tr
        key={c.id}
        data-testid={`channel-${c.id}`}
        className={cx(
          c.status !== ChannelStatus.Enabled && 'bg-gray-100 dark:bg-gray-800/70',
          child && 'text-gray-700 dark:text-gray-300',
        )}
      >
        <td className="px-3 py-2">
          <input
            type="checkbox"
            aria-label={t('table.select', { name: c.name })}
            checked={selected.has(c.id)}
            onChange={(e) => onSelect([c.id], e.target.checked)}
          />
        </td>
        {show('id') ? <td className="px-3 py-2">{c.id}</td> : null}
        {show('name') ? (
          <td className={cx('px-3 py-2 font-medium', child && 'pl-8')}>
            {c.name} {managed ? <ManagedBadge source={managed} /> : null}
            {c.channel_info?.is_multi_key ? (
              <Tag color="blue">{t('keys.badge', { count: c.channel_info.multi_key_size })}</Tag>
            ) : null}
          </td>
        ) : null}
        {show('group') ? (
          <td className="px-3 py-2">
            <div className="flex flex-wrap gap-1">
              {splitList(c.group).map((g) => (
                <Tag key={g}>{g}</Tag>
              ))}
            </div>
          </td>
        ) : null}
        {show('type') ? (
          <td className="px-3 py-2">
            {findProviderType(c.type)?.label ?? t('type.unknown', { type: c.type })}
          </td>
        ) : null}
        {show('status') ? (
          <td className="px-3 py-2">
            <StatusTag channel={c} />
          </td>
        ) : null}
        {show('response_time') ? (
          <td className="px-3 py-2">
            <ResponseTime ms={c.response_time} />
          </td>
        ) : null}
        {show('balance') ? (
          <td className="px-3 py-2 text-xs">
            <div>
              {t('balance.used')} {formatQuota(c.used_quota, display)}
            </div>
            {findProviderType(c.type)?.balance ? (
              <button
                type="button"
                className="text-blue-600 hover:underline disabled:opacity-50"
                disabled={busyIds.has(`balance-${c.id}`)}
                title={
                  c.balance_updated_time
                    ? t('balance.updatedAt', { time: formatTimestamp(c.balance_updated_time) })
                    : t('balance.refresh')
                }
                aria-label={t('balance.refreshOf', { name: c.name })}
                onClick={() => props.onRefreshBalance(c)}
              >
                {t('balance.remaining')} {balanceText(c)}
              </button>
            ) : (
              <div className="text-gray-500" title={t('balance.unsupported')}>
                {t('balance.remaining')} -
              </div>
            )}
          </td>
        ) : null}
        {show('priority') ? (
          <td className="px-3 py-2">
            {managed ? (
              <span title={readOnlyTitle}>{c.priority}</span>
            ) : (
              <InlineNumber
                label={t('table.priorityOf', { name: c.name })}
                value={c.priority}
                min={-999}
                onCommit={(text) => props.onPriority(c, text)}
              />
            )}
          </td>
        ) : null}
        {show('weight') ? (
          <td className="px-3 py-2">
            {managed ? (
              <span title={readOnlyTitle}>{c.weight}</span>
            ) : (
              <InlineNumber
                label={t('table.weightOf', { name: c.name })}
                value={c.weight}
                min={0}
                onCommit={(text) => props.onWeight(c, text)}
              />
            )}
          </td>
        ) : null}
        <td className="px-3 py-2">
          <div className="flex flex-wrap gap-1">
            <Button
              size="sm"
              variant="secondary"
              loading={busyIds.has(`test-${c.id}`)}
              aria-label={t('action.testOf', { name: c.name })}
              onClick={() => props.onTest(c)}
            >
              {t('action.test')}
            </Button>
            <Button
              size="sm"
              variant="ghost"
              aria-label={t('action.pickModelOf', { name: c.name })}
              onClick={() => props.onPickTestModel(c)}
            >
              ▾
            </Button>
            <Button
              size="sm"
              variant="secondary"
              disabled={busy || managed !== null}
              title={readOnlyTitle}
              aria-label={`${c.status === ChannelStatus.Enabled ? t('action.disable') : t('action.enable')} ${c.name}`}
              onClick={() => props.onToggleStatus(c)}
            >
              {c.status === ChannelStatus.Enabled ? t('action.disable') : t('action.enable')}
            </Button>
            <Button
              size="sm"
              variant="secondary"
              aria-label={
                managed ? t('action.viewOf', { name: c.name }) : t('action.editOf', { name: c.name })
              }
              onClick={() => props.onEdit(c)}
            >
              {managed ? t('action.view') : t('action.edit')}
            </Button>
            <Button
              size="sm"
              variant="secondary"
              aria-label={t('action.copyOf', { name: c.name })}
              onClick={() => props.onCopy(c)}
            >
              {t('action.copy')}
            </Button>
            <Button
              size="sm"
              variant="danger"
              disabled={managed !== null}
              title={readOnlyTitle}
              aria-label={t('action.deleteOf', { name: c.name })}
              onClick={() => props.onDelete(c)}
            >
              {t('action.delete')}
            </Button>
          </div>
        </td>
      </tr>
    );
  };

  const tagRow = (tag: ChannelTagView) => {
    const expanded = open.has(tag.tag);
    const ids = tag.children.map((c) => c.id);
    return (
      <Fragment key={tag.id}>
        <tr data-testid={`tag-${tag.tag}`} className="bg-blue-50/50 dark:bg-blue-900/10">
          <td className="px-3 py-2">
            <input
              type="checkbox"
              aria-label={t('table.select', { name: tag.tag })}
              checked={ids.every((id) => selected.has(id))}
              onChange={(e) => onSelect(ids, e.target.checked)}
            />
          </td>
          {show('id') ? (
            <td className="px-3 py-2">
              <button
                type="button"
                aria-expanded={expanded}
                aria-label={t('tag.expand', { tag: tag.tag })}
                onClick={() =>
                  setOpen((s) => {
                    const next = new Set(s);
                    if (next.has(tag.tag)) next.delete(tag.tag);
                    else next.add(tag.tag);
                    return next;
                  })
                }
              >
                {expanded ? '▾' : '▸'}
              </button>
            </td>
          ) : null}
          {show('name') ? (
            <td className="px-3 py-2 font-medium">
              {t('tag.label', { tag: tag.tag })}{' '}
              <span className="text-xs text-gray-500">{t('tag.count', { count: tag.children.length })}</span>
            </td>
          ) : null}
          {show('group') ? (
            <td className="px-3 py-2">
              <div className="flex flex-wrap gap-1">
                {splitList(tag.group).map((g) => (
                  <Tag key={g}>{g}</Tag>
                ))}
              </div>
            </td>
          ) : null}
          {show('type') ? <td className="px-3 py-2">-</td> : null}
          {show('status') ? (
            <td className="px-3 py-2">
              {tag.status === ChannelStatus.Enabled ? (
                <Tag color="green">{t('status.enabled')}</Tag>
              ) : (
                <Tag color="red">{t('status.disabled')}</Tag>
              )}
            </td>
          ) : null}
          {show('response_time') ? (
            <td className="px-3 py-2">
              <ResponseTime ms={tag.response_time} />
            </td>
          ) : null}
          {show('balance') ? (
            <td className="px-3 py-2 text-xs">
              {t('balance.used')} {formatQuota(tag.used_quota, display)}
            </td>
          ) : null}
          {show('priority') ? (
            <td className="px-3 py-2">
              <InlineNumber
                label={t('table.priorityOf', { name: tag.tag })}
                value={tag.priority}
                onCommit={(text) => props.onTagPriority(tag, text)}
              />
            </td>
          ) : null}
          {show('weight') ? (
            <td className="px-3 py-2">
              <InlineNumber
                label={t('table.weightOf', { name: tag.tag })}
                value={tag.weight}
                onCommit={(text) => props.onTagWeight(tag, text)}
              />
            </td>
          ) : null}
          <td className="px-3 py-2">
            <div className="flex flex-wrap gap-1">
              <Button
                size="sm"
                variant="secondary"
                aria-label={t('tag.enableAllOf', { tag: tag.tag })}
                onClick={() => props.onTagStatus(tag, true)}
              >
                {t('tag.enableAll')}
              </Button>
              <Button
                size="sm"
                variant="secondary"
                aria-label={t('tag.disableAllOf', { tag: tag.tag })}
                onClick={() => props.onTagStatus(tag, false)}
              >
                {t('tag.disableAll')}
              </Button>
              <Button
                size="sm"
                variant="secondary"
                aria-label={t('tag.editOf', { tag: tag.tag })}
                onClick={() => props.onEditTag(tag)}
              >
                {t('tag.edit')}
              </Button>
            </div>
          </td>
        </tr>
        {expanded ? tag.children.map((c) => channelRow(c, true)) : null}
      </Fragment>
    );
  };

  return (
    <div className="overflow-x-auto rounded-lg border border-gray-200 dark:border-gray-700">
      <table className="min-w-full divide-y divide-gray-200 text-sm whitespace-nowrap dark:divide-gray-700">
        <thead className="bg-gray-50 text-left text-gray-600 dark:bg-gray-800 dark:text-gray-300">
          <tr>
            <th className="px-3 py-2">
              <input
                type="checkbox"
                aria-label={t('table.selectAll')}
                checked={allSelected}
                onChange={(e) => onSelect(pageIds, e.target.checked)}
              />
            </th>
            {(
              [
                'id',
                'name',
                'group',
                'type',
                'status',
                'response_time',
                'balance',
                'priority',
                'weight',
              ] as const
            )
              .filter(show)
              .map((c) => (
                <th key={c} className="px-3 py-2 font-medium">
                  {t(`col.${c}`)}
                </th>
              ))}
            <th className="px-3 py-2 font-medium">{t('col.actions')}</th>
          </tr>
        </thead>
        <tbody className="divide-y divide-gray-100 dark:divide-gray-800">
          {rows.map((r) => (isTagRow(r) ? tagRow(r) : channelRow(r, false)))}
        </tbody>
      </table>
      <TableState loading={loading} />
    </div>
  );
}
