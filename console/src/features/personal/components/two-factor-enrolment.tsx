import type { TwoFactorSetup } from '@turnpike/core/contracts/two-factor';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Button, Input } from '../../../components/ui/index.ts';
import { AlertText } from '../../auth/components/alert-text.tsx';
import { beginTwoFactorSetup, enableTwoFactor } from '../api/two-factor.ts';
import { BackupCodeList } from './backup-code-list.tsx';
import { QrCode } from './qr-code.tsx';

/**
 * Turning two-factor sign-in on: a new secret as a QR code (and as text, for apps that cannot scan), the backup
 * codes shown this once, and a code from the app to confirm it scanned right. Used on the personal page and on the
 * enrolment page an administrator is sent to (docs/adr/0044).
 */
export function TwoFactorEnrolment({ onEnabled }: { onEnabled: () => void }) {
  const { t } = useTranslation('two-factor');
  const [setup, setSetup] = useState<TwoFactorSetup | null>(null);
  const [code, setCode] = useState('');
  const [saved, setSaved] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const begin = async () => {
    setBusy(true);
    try {
      setSetup(await beginTwoFactorSetup());
    } catch {
      // shown by the request client
    } finally {
      setBusy(false);
    }
  };

  const enable = async () => {
    if (!code.trim()) {
      setError(t('signIn.codeRequired'));
      return;
    }
    setBusy(true);
    setError(null);
    try {
      await enableTwoFactor(code.trim());
      onEnabled();
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };

  if (!setup)
    return (
      <div className="flex flex-col gap-2">
        <p className="text-sm text-gray-600 dark:text-gray-300">{t('setup.intro')}</p>
        <Button className="self-start" loading={busy} onClick={() => void begin()}>
          {t('setup.start')}
        </Button>
      </div>
    );
  return (
    <div className="flex flex-col gap-3">
      <ol className="flex list-decimal flex-col gap-3 pl-5 text-sm">
        <li>
          <p>{t('setup.scan')}</p>
          <div className="mt-2 flex flex-wrap items-end gap-3">
            <QrCode text={setup.qr_code_data} label={t('setup.qrLabel')} />
            <div className="text-xs">
              <p className="text-gray-500">{t('setup.manual')}</p>
              <code data-testid="totp-secret" className="break-all font-mono">
                {setup.secret}
              </code>
            </div>
          </div>
        </li>
        <li>
          <BackupCodeList codes={setup.backup_codes} />
          <label className="mt-2 flex items-center gap-2">
            <input type="checkbox" checked={saved} onChange={(e) => setSaved(e.target.checked)} />
            {t('backup.saved')}
          </label>
        </li>
        <li>
          <Input
            label={t('setup.code')}
            name="totp-code"
            autoComplete="one-time-code"
            inputMode="numeric"
            value={code}
            onChange={(e) => setCode(e.target.value)}
          />
        </li>
      </ol>
      <AlertText text={error} />
      <Button className="self-start" loading={busy} disabled={!saved} onClick={() => void enable()}>
        {t('setup.enable')}
      </Button>
    </div>
  );
}
