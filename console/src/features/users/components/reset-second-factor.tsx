import { useQuery, useQueryClient } from '@tanstack/react-query';
import type { UserSecondFactors } from '@turnpike/core/contracts/two-factor';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Button, ConfirmDialog, Tag } from '../../../components/ui/index.ts';
import { api } from '../../../lib/api.ts';
import { toast } from '../../../lib/toast.ts';

const queryKey = (id: number) => ['user', id, 'second-factors'] as const;

/**
 * The user editor's second factors: what the user has (authenticator app, passkeys) and an administrator's reset
 * of both (a lost phone), which also ends the user's sessions (docs/adr/0044).
 */
export function ResetSecondFactor({ userId }: { userId: number }) {
  const { t } = useTranslation('two-factor');
  const queryClient = useQueryClient();
  const factors = useQuery({
    queryKey: queryKey(userId),
    queryFn: () => api.get<UserSecondFactors>(`/api/user/${userId}/second_factors`, { silent: true }),
  });
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);

  const reset = async () => {
    setBusy(true);
    try {
      const { totp, passkeys } = factors.data ?? { totp: false, passkeys: 0 };
      if (totp) await api.delete(`/api/user/${userId}/2fa?passkeys=true`);
      else if (passkeys > 0) await api.delete(`/api/user/${userId}/reset_passkey`);
      toast.success(t('admin.resetDone'));
      await queryClient.invalidateQueries({ queryKey: queryKey(userId) });
    } catch {
      // shown by the request client
    } finally {
      setBusy(false);
      setConfirming(false);
    }
  };

  if (!factors.data) return null;
  const { totp, passkeys } = factors.data;
  return (
    <fieldset className="mt-2 flex flex-col gap-2">
      <legend className="mb-1 text-sm font-medium">{t('admin.title')}</legend>
      <div className="flex flex-wrap items-center gap-2 text-sm">
        <Tag color={totp ? 'green' : 'gray'}>{totp ? t('admin.totpOn') : t('admin.totpOff')}</Tag>
        <Tag color={passkeys > 0 ? 'green' : 'gray'}>{t('admin.passkeys', { count: passkeys })}</Tag>
        <Button
          size="sm"
          variant="danger"
          disabled={!totp && passkeys === 0}
          onClick={() => setConfirming(true)}
        >
          {t('admin.reset')}
        </Button>
      </div>
      <ConfirmDialog
        open={confirming}
        title={t('admin.resetTitle')}
        message={t('admin.resetBody')}
        confirmText={t('admin.reset')}
        danger
        loading={busy}
        onCancel={() => setConfirming(false)}
        onConfirm={() => void reset()}
      />
    </fieldset>
  );
}
