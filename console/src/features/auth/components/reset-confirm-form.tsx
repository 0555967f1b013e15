import { type FormEvent, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Button } from '../../../components/ui/button.tsx';
import { Input } from '../../../components/ui/input.tsx';
import { api } from '../../../lib/api.ts';
import { toast } from '../../../lib/toast.ts';
import { AuthCard } from './auth-card.tsx';

/** /user/reset?email=&token=: confirms the reset and shows the new password (copied to the clipboard). */
export function ResetConfirmForm({ email, token }: { email: string; token: string }) {
  const { t } = useTranslation();
  const [newPassword, setNewPassword] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const complete = newPassword !== null;

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (!email || !token) {
      setError(t('reset.badLink'));
      return;
    }
    setBusy(true);
    try {
      const password = await api.post<string>('/api/user/reset', { email, token }, { silent: true });
      setNewPassword(password);
      try {
        await navigator.clipboard.writeText(password);
        toast.success(t('reset.copied'));
      } catch {
        toast.info(t('error.copyFailed'));
      }
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <AuthCard title={complete ? t('reset.complete') : t('reset.confirmTitle')}>
      <form onSubmit={(e) => void submit(e)} className="flex flex-col gap-3">
        <Input label={t('auth.email')} name="email" value={email} readOnly />
        {complete ? (
          <Input label={t('reset.newPassword')} name="new-password" value={newPassword ?? ''} readOnly />
        ) : null}
        {error ? (
          <p role="alert" className="text-sm text-red-600 dark:text-red-400">
            {error}
          </p>
        ) : null}
        <Button type="submit" loading={busy} disabled={complete}>
          {complete ? t('reset.complete') : t('reset.confirmSubmit')}
        </Button>
      </form>
    </AuthCard>
  );
}
