import { Link, useNavigate } from '@tanstack/react-router';
import { type FormEvent, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Button } from '../../../components/ui/button.tsx';
import { Input } from '../../../components/ui/input.tsx';
import { api } from '../../../lib/api.ts';
import { useStatus } from '../../../lib/status.ts';
import { readStored, StorageKey } from '../../../lib/storage.ts';
import { toast } from '../../../lib/toast.ts';
import { RESEND_WAIT_SECONDS, useCountdown } from '../use-countdown.ts';
import { type RegisterForm as Form, isEmail, validateRegister } from '../validation.ts';
import { AuthCard } from './auth-card.tsx';
import { useHumanCheck } from './human-check.tsx';
import { ThirdPartyButtons } from './third-party-buttons.tsx';

export function RegisterForm() {
  const { t } = useTranslation();
  const { data: status } = useStatus();
  const navigate = useNavigate();
  const [form, setForm] = useState<Form>({
    username: '',
    password: '',
    password2: '',
    email: '',
    verificationCode: '',
  });
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const countdown = useCountdown(RESEND_WAIT_SECONDS);
  const humanCheck = useHumanCheck(status);
  const emailVerification = Boolean(status?.email_verification);
  const set = (key: keyof Form) => (e: { target: { value: string } }) =>
    setForm((f) => ({ ...f, [key]: e.target.value }));

  const sendCode = async () => {
    if (!isEmail(form.email)) {
      setError(t(form.email.trim() ? 'validation.emailInvalid' : 'validation.emailRequired'));
      return;
    }
    if (humanCheck.pending) {
      setError(t('auth.humanCheckRunning'));
      return;
    }
    setError(null);
    countdown.start();
    try {
      await api.get('/api/verification', { query: { email: form.email.trim(), ...humanCheck.query } });
      toast.success(t('auth.codeSent'));
    } catch {
      // the toast already says why
    }
  };

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const problem = validateRegister(form, emailVerification);
    if (problem) {
      setError(t(problem));
      return;
    }
    if (humanCheck.pending) {
      setError(t('auth.humanCheckRunning'));
      return;
    }
    setError(null);
    setBusy(true);
    try {
      await api.post(
        '/api/user/register',
        {
          username: form.username.trim(),
          password: form.password,
          password2: form.password2,
          email: form.email.trim(),
          verification_code: form.verificationCode.trim(),
          aff_code: readStored(StorageKey.AffCode) ?? '',
        },
        { silent: true, query: humanCheck.query },
      );
      toast.success(t('auth.registerSuccess'));
      await navigate({ to: '/login' });
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };

  const closed = status && (!status.register_enabled || !status.password_register_enabled);
  return (
    <AuthCard title={t('auth.registerTitle')}>
      {closed ? (
        <p className="text-sm text-gray-500">{t('auth.registerOff')}</p>
      ) : (
        <form onSubmit={(e) => void submit(e)} noValidate className="flex flex-col gap-3">
          <Input
            label={t('auth.username')}
            name="username"
            autoComplete="username"
            maxLength={12}
            value={form.username}
            onChange={set('username')}
          />
          <Input
            label={t('auth.password')}
            name="password"
            type="password"
            placeholder={t('auth.passwordPlaceholder')}
            autoComplete="new-password"
            value={form.password}
            onChange={set('password')}
          />
          <Input
            label={t('auth.confirmPassword')}
            name="password2"
            type="password"
            autoComplete="new-password"
            value={form.password2}
            onChange={set('password2')}
          />
          {emailVerification ? (
            <>
              <div className="flex items-end gap-2">
                <div className="flex-1">
                  <Input
                    label={t('auth.email')}
                    name="email"
                    type="email"
                    value={form.email}
                    onChange={set('email')}
                  />
                </div>
                <Button variant="secondary" disabled={countdown.left > 0} onClick={() => void sendCode()}>
                  {countdown.left > 0 ? t('auth.resendIn', { seconds: countdown.left }) : t('auth.sendCode')}
                </Button>
              </div>
              <Input
                label={t('auth.verificationCode')}
                name="verification_code"
                value={form.verificationCode}
                onChange={set('verificationCode')}
              />
            </>
          ) : null}
          {humanCheck.widget}
          {error ? (
            <p role="alert" className="text-sm text-red-600 dark:text-red-400">
              {error}
            </p>
          ) : null}
          <Button type="submit" loading={busy}>
            {t('auth.register')}
          </Button>
        </form>
      )}
      <ThirdPartyButtons status={status} />
      <p className="mt-4 text-sm">
        {t('auth.haveAccount')}{' '}
        <Link to="/login" className="text-blue-600 hover:underline">
          {t('auth.login')}
        </Link>
      </p>
    </AuthCard>
  );
}
