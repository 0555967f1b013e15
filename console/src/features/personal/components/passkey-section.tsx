import { useQuery, useQueryClient } from '@tanstack/react-query';
import type { PasskeyView } from '@turnpike/core/contracts/passkeys';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Button, ConfirmDialog, Input } from '../../../components/ui/index.ts';
import { formatTimestamp } from '../../../lib/format.ts';
import { useStatus } from '../../../lib/status.ts';
import { toast } from '../../../lib/toast.ts';
import { AlertText } from '../../auth/components/alert-text.tsx';
import { canUsePasskeys, passkeyErrorText } from '../../auth/passkeys.ts';
import { fetchPasskeys, passkeysQueryKey, registerPasskey, removePasskey } from '../api/passkeys.ts';

/** Personal settings' passkeys: the list, one more with a name, one removed (docs/adr/0044). */
export function PasskeySection() {
  const { t } = useTranslation('two-factor');
  const queryClient = useQueryClient();
  const { data: status } = useStatus();
  const passkeys = useQuery({ queryKey: passkeysQueryKey, queryFn: fetchPasskeys });
  const [name, setName] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [removing, setRemoving] = useState<PasskeyView | null>(null);
  const refresh = () => void queryClient.invalidateQueries({ queryKey: passkeysQueryKey });

  const add = async () => {
    setBusy(true);
    setError(null);
    try {
      await registerPasskey(name.trim());
      setName('');
      toast.success(t('passkey.added'));
      refresh();
    } catch (err) {
      setError(passkeyErrorText(err, t));
    } finally {
      setBusy(false);
    }
  };
  const remove = async () => {
    if (!removing) return;
    setBusy(true);
    try {
      await removePasskey(removing.id);
      toast.success(t('passkey.removed'));
      refresh();
    } catch {
      // shown by the request client
    } finally {
      setBusy(false);
      setRemoving(null);
    }
  };

  const list = passkeys.data?.passkeys ?? [];
  return (
    <div className="flex flex-col gap-3">
      <span className="text-sm font-medium">{t('passkey.title')}</span>
      {list.length === 0 ? (
        <p className="text-sm text-gray-500">{t('passkey.none')}</p>
      ) : (
        <ul aria-label={t('passkey.title')} className="flex flex-col gap-1 text-sm">
          {list.map((p) => (
            <li
              key={p.id}
              className="flex items-center justify-between gap-2 rounded border border-gray-200 px-2 py-1 dark:border-gray-700"
            >
              <span>
                <span className="font-medium">{p.name}</span>{' '}
                <span className="text-xs text-gray-500">
                  {t('passkey.added_at', { time: formatTimestamp(p.created_at) })}
                  {' · '}
                  {p.last_used_at
                    ? t('passkey.used_at', { time: formatTimestamp(p.last_used_at) })
                    : t('passkey.never_used')}
                </span>
              </span>
              <Button size="sm" variant="danger" onClick={() => setRemoving(p)}>
                {t('passkey.remove')}
              </Button>
            </li>
          ))}
        </ul>
      )}
      {canUsePasskeys(status) ? (
        <div className="flex flex-wrap items-end gap-2">
          <div className="min-w-48 flex-1">
            <Input
              label={t('passkey.name')}
              name="passkey-name"
              placeholder={t('passkey.namePlaceholder')}
              value={name}
              maxLength={64}
              onChange={(e) => setName(e.target.value)}
            />
          </div>
          <Button loading={busy} onClick={() => void add()}>
            {t('passkey.add')}
          </Button>
        </div>
      ) : (
        <p className="text-sm text-gray-500">{t('passkey.unavailable')}</p>
      )}
      <AlertText text={error} />
      <ConfirmDialog
        open={removing !== null}
        title={t('passkey.removeTitle')}
        message={t('passkey.removeBody', { name: removing?.name ?? '' })}
        confirmText={t('passkey.remove')}
        danger
        loading={busy}
        onCancel={() => setRemoving(null)}
        onConfirm={() => void remove()}
      />
    </div>
  );
}
