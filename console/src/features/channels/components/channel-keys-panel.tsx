import { useQuery, useQueryClient } from '@tanstack/react-query';
import { KeyStatus } from '@turnpike/core/channels/multi-key';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Button, ConfirmDialog, Spinner, Tag } from '../../../components/ui/index.ts';
import { formatTimestamp } from '../../../lib/format.ts';
import { toast } from '../../../lib/toast.ts';
import { fetchKeyStatus, type KeyActionValue, keyStatusQueryKey, manageKeys } from '../api/channel-keys.ts';

const PAGE_SIZE = 20;

type Action = Exclude<KeyActionValue, 'get_key_status'>;
/** Actions that ask first: every bulk action, and deleting a key. */
const CONFIRMED: readonly Action[] = [
  'delete_key',
  'enable_all_keys',
  'disable_all_keys',
  'delete_disabled_keys',
];

/**
 * The keys of a multi-key channel: each masked, with its state, why and since when it is off; one key enabled,
 * disabled or deleted, or all at once after a confirmation. The key itself never reaches the browser.
 */
export function ChannelKeysPanel({
  channelId,
  readOnly,
  onChanged,
}: {
  channelId: number;
  readOnly: boolean;
  onChanged?: () => void;
}) {
  const { t } = useTranslation('channels');
  const queryClient = useQueryClient();
  const [page, setPage] = useState(1);
  const [pending, setPending] = useState<{ action: Action; index?: number } | null>(null);
  const [busy, setBusy] = useState(false);
  const keys = useQuery({
    queryKey: keyStatusQueryKey(channelId, page),
    queryFn: () => fetchKeyStatus(channelId, page, PAGE_SIZE),
  });

  const run = async (action: Action, index?: number) => {
    setBusy(true);
    try {
      await manageKeys(channelId, action, index);
      toast.success(t(`keys.done.${action}`, { index: (index ?? 0) + 1 }));
      await queryClient.invalidateQueries({ queryKey: ['channel-keys', channelId] });
      onChanged?.();
    } catch {
      // shown by the request client
    } finally {
      setBusy(false);
      setPending(null);
    }
  };
  const ask = (action: Action, index?: number) =>
    CONFIRMED.includes(action) ? setPending({ action, index }) : void run(action, index);

  const data = keys.data;
  const statusTag = (status: number) =>
    status === KeyStatus.Enabled ? (
      <Tag color="green">{t('status.enabled')}</Tag>
    ) : status === KeyStatus.AutoDisabled ? (
      <Tag color="red">{t('status.auto')}</Tag>
    ) : (
      <Tag color="orange">{t('status.disabled')}</Tag>
    );

  return (
    <section aria-label={t('keys.title')} className="flex flex-col gap-2" data-testid="channel-keys">
      <div className="flex flex-wrap items-center justify-between gap-2">
        <h3 className="text-sm font-semibold">
          {t('keys.title')}
          {data ? (
            <span className="ml-2 font-normal text-gray-500">
              {t('keys.summary', {
                total: data.enabled_count + data.manual_disabled_count + data.auto_disabled_count,
                enabled: data.enabled_count,
                disabled: data.manual_disabled_count + data.auto_disabled_count,
              })}
            </span>
          ) : null}
        </h3>
        {readOnly ? null : (
          <div className="flex flex-wrap gap-1">
            <Button size="sm" variant="secondary" disabled={busy} onClick={() => ask('enable_all_keys')}>
              {t('keys.enableAll')}
            </Button>
            <Button size="sm" variant="secondary" disabled={busy} onClick={() => ask('disable_all_keys')}>
              {t('keys.disableAll')}
            </Button>
            <Button size="sm" variant="danger" disabled={busy} onClick={() => ask('delete_disabled_keys')}>
              {t('keys.deleteDisabled')}
            </Button>
          </div>
        )}
      </div>
      {!data ? (
        <div className="flex justify-center py-4 text-blue-600">
          <Spinner />
        </div>
      ) : (
        <table className="w-full text-left text-sm">
          <thead className="text-xs text-gray-500">
            <tr>
              <th className="py-1">#</th>
              <th>{t('keys.key')}</th>
              <th>{t('col.status')}</th>
              <th>{t('keys.reason')}</th>
              <th>{t('keys.since')}</th>
              {readOnly ? null : <th>{t('col.actions')}</th>}
            </tr>
          </thead>
          <tbody>
            {data.keys.map((key) => (
              <tr key={key.index} className="border-t border-gray-100 dark:border-gray-800">
                <td className="py-1">{key.index + 1}</td>
                <td className="font-mono text-xs">{key.key_preview}</td>
                <td>{statusTag(key.status)}</td>
                <td className="text-xs">{key.disabled_reason || '-'}</td>
                <td className="text-xs">{key.disabled_time ? formatTimestamp(key.disabled_time) : '-'}</td>
                {readOnly ? null : (
                  <td className="flex gap-1 py-1">
                    {key.status === KeyStatus.Enabled ? (
                      <Button
                        size="sm"
                        variant="ghost"
                        disabled={busy}
                        aria-label={t('keys.disableOf', { index: key.index + 1 })}
                        onClick={() => ask('disable_key', key.index)}
                      >
                        {t('action.disable')}
                      </Button>
                    ) : (
                      <Button
                        size="sm"
                        variant="ghost"
                        disabled={busy}
                        aria-label={t('keys.enableOf', { index: key.index + 1 })}
                        onClick={() => ask('enable_key', key.index)}
                      >
                        {t('action.enable')}
                      </Button>
                    )}
                    <Button
                      size="sm"
                      variant="ghost"
                      disabled={busy}
                      aria-label={t('keys.deleteOf', { index: key.index + 1 })}
                      onClick={() => ask('delete_key', key.index)}
                    >
                      {t('action.delete')}
                    </Button>
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {data && data.total_pages > 1 ? (
        <div className="flex items-center gap-2 text-xs">
          <Button size="sm" variant="ghost" disabled={page <= 1} onClick={() => setPage(page - 1)}>
            ‹
          </Button>
          <span>
            {page} / {data.total_pages}
          </span>
          <Button
            size="sm"
            variant="ghost"
            disabled={page >= data.total_pages}
            onClick={() => setPage(page + 1)}
          >
            ›
          </Button>
        </div>
      ) : null}
      <ConfirmDialog
        open={pending !== null}
        title={pending ? t(`keys.confirm.${pending.action}`, { index: (pending.index ?? 0) + 1 }) : ''}
        message={pending?.action.startsWith('delete') ? t('confirm.irreversible') : undefined}
        danger={pending?.action !== 'enable_all_keys'}
        loading={busy}
        onCancel={() => setPending(null)}
        onConfirm={() => pending && void run(pending.action, pending.index)}
      />
    </section>
  );
}
