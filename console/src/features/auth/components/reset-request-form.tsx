import { type FormEvent, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Button } from '../../../components/ui/button.tsx';
import { Input } from '../../../components/ui/input.tsx';
import { api } from '../../../lib/api.ts';
import { useStatus } from '../../../lib/status.ts';
import { toast } from '../../../lib/toast.ts';
import { RESEND_WAIT_SECONDS, useCountdown } from '../use-countdown.ts';
import { validateResetEmail } from '../validation.ts';
import { AuthCard } from './auth-card.tsx';
import { useHumanCheck } from './human-check.tsx';

/** /reset: asks for a reset email; the button waits 30 s after each click (spec 02). */
export function ResetRequestForm() {
  const { t } = useTranslation();
  const [email, setEmail] = useState('');
  const [error, setError] = useState<string | null>(null);
  const countdown = useCountdown(RESEND_WAIT_SECONDS);
  const { data: status } = useStatus();
  const humanCheck = useHumanCheck(status);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const problem = validateResetEmail(email);
    if (problem) {
      setError(t(problem));
      return;
    }
    if (humanCheck.pending) {
      setError(t('auth.humanCheckRunning'));
      return;
    }
    setError(null);
    countdown.start();
    try {
      await api.get('/api/reset_password', {
        query: { email: email.trim(), ...humanCheck.query },
        silent: true,
      });
      toast.success(t('reset.sent'));
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    }
  };

  return (
    <AuthCard title={t('reset.title')}>
      <form onSubmit={(e) => void submit(e)} noValidate className="flex flex-col gap-3">
        <Input
          label={t('auth.email')}
          name="email"
          type="email"
          value={email}
          onChange={(e) => setEmail(e.target.value)}
          error={error}
        />
        {humanCheck.widget}
        <Button type="submit" disabled={countdown.left > 0}>
          {countdown.left > 0 ? t('reset.retryIn', { seconds: countdown.left }) : t('reset.submit')}
        </Button>
      </form>
    </AuthCard>
  );
}
