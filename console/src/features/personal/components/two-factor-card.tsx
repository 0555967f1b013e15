import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Button, DialogFooter, Input, Modal, Tag } from '../../../components/ui/index.ts';
import { toast } from '../../../lib/toast.ts';
import { AlertText } from '../../auth/components/alert-text.tsx';
import {
  disableTwoFactor,
  fetchTwoFactorStatus,
  regenerateBackupCodes,
  twoFactorQueryKey,
} from '../api/two-factor.ts';
import { BackupCodeList } from './backup-code-list.tsx';
import { TwoFactorEnrolment } from './two-factor-enrolment.tsx';

type Action = 'disable' | 'codes' | null;

/** Personal settings' two-factor sign-in: on or off, what is left of the backup codes, new codes, off. */
export function TwoFactorSection() {
  const { t } = useTranslation('two-factor');
  const queryClient = useQueryClient();
  const status = useQuery({ queryKey: twoFactorQueryKey, queryFn: fetchTwoFactorStatus });
  const [action, setAction] = useState<Action>(null);
  const [code, setCode] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [freshCodes, setFreshCodes] = useState<string[] | null>(null);
  const refresh = () => void queryClient.invalidateQueries({ queryKey: twoFactorQueryKey });

  const close = () => {
    setAction(null);
    setCode('');
    setError(null);
    setFreshCodes(null);
  };
  const confirm = async () => {
    setBusy(true);
    setError(null);
    try {
      if (action === 'disable') {
        await disableTwoFactor(code.trim());
        toast.success(t('manage.disabled'));
        close();
      } else {
        setFreshCodes((await regenerateBackupCodes(code.trim())).backup_codes);
      }
      refresh();
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };

  if (!status.data) return null;
  const { enabled, backup_codes_remaining: remaining, locked } = status.data;
  return (
    <div className="flex flex-col gap-3">
      <div className="flex items-center gap-2 text-sm">
        <span className="font-medium">{t('title')}</span>
        <Tag color={enabled ? 'green' : 'gray'}>{enabled ? t('manage.on') : t('manage.off')}</Tag>
        {locked ? <Tag color="red">{t('manage.locked')}</Tag> : null}
      </div>
      {enabled ? (
        <>
          <p className="text-sm text-gray-600 dark:text-gray-300">
            {t('manage.remaining', { count: remaining ?? 0 })}
          </p>
          <div className="flex flex-wrap gap-2">
            <Button variant="secondary" onClick={() => setAction('codes')}>
              {t('manage.newCodes')}
            </Button>
            <Button variant="danger" onClick={() => setAction('disable')}>
              {t('manage.disable')}
            </Button>
          </div>
        </>
      ) : (
        <TwoFactorEnrolment
          onEnabled={() => {
            toast.success(t('setup.enabled'));
            refresh();
          }}
        />
      )}
      <Modal
        open={action !== null}
        onClose={close}
        title={action === 'disable' ? t('manage.disableTitle') : t('manage.newCodesTitle')}
        footer={
          freshCodes ? (
            <Button onClick={close}>{t('manage.done')}</Button>
          ) : (
            <DialogFooter
              onCancel={close}
              onOk={() => void confirm()}
              busy={busy}
              danger={action === 'disable'}
              okText={action === 'disable' ? t('manage.disable') : t('manage.newCodes')}
            />
          )
        }
      >
        {freshCodes ? (
          <BackupCodeList codes={freshCodes} />
        ) : (
          <div className="flex flex-col gap-2">
            <p>{action === 'disable' ? t('manage.disableBody') : t('manage.newCodesBody')}</p>
            <Input
              label={action === 'disable' ? t('signIn.code') : t('setup.code')}
              name="confirm-code"
              autoComplete="one-time-code"
              value={code}
              onChange={(e) => setCode(e.target.value)}
            />
            <AlertText text={error} />
          </div>
        )}
      </Modal>
    </div>
  );
}
