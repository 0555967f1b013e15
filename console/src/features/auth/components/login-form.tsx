import { Link, useNavigate } from '@tanstack/react-router';
import type { SecondStepRequired } from '@turnpike/core/contracts/two-factor';
import { type FormEvent, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Button } from '../../../components/ui/button.tsx';
import { Input } from '../../../components/ui/input.tsx';
import { ConfirmDialog } from '../../../components/ui/modal.tsx';
import { api } from '../../../lib/api.ts';
import { useStatus } from '../../../lib/status.ts';
import { type LoginAnswer, needsSecondStep, type SignedIn } from '../api/second-step.ts';
import { canUsePasskeys } from '../passkeys.ts';
import { ENROLMENT_PAGE, SIGNED_IN_PAGE, useRememberSignIn } from '../use-sign-in.ts';
import { validateLogin } from '../validation.ts';
import { AuthCard } from './auth-card.tsx';
import { useHumanCheck } from './human-check.tsx';
import { PasskeySignInButton } from './passkey-sign-in-button.tsx';
import { SecondStepForm } from './second-step-form.tsx';
import { ThirdPartyButtons } from './third-party-buttons.tsx';

/** The password that ships as root's default; signing in with it triggers the change-now notice. */
const DEFAULT_ROOT_PASSWORD = '123456';

export function LoginForm({ expired }: { expired?: boolean }) {
  const { t } = useTranslation();
  const { data: status } = useStatus();
  const navigate = useNavigate();
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(expired ? t('error.sessionExpired') : null);
  const [busy, setBusy] = useState(false);
  const [defaultWarning, setDefaultWarning] = useState(false);
  const [secondStep, setSecondStep] = useState<SecondStepRequired | null>(null);
  const humanCheck = useHumanCheck(status);
  const rememberSignIn = useRememberSignIn();
  const passkeysUsable = canUsePasskeys(status);

  /** Every way in ends here: an administrator the site requires to enrol goes to the enrolment first. */
  const finishSignIn = async (user: SignedIn, afterPassword = false) => {
    rememberSignIn(user);
    if (user.require_2fa_setup) await navigate({ to: ENROLMENT_PAGE });
    else if (afterPassword && username.trim() === 'root' && password === DEFAULT_ROOT_PASSWORD)
      setDefaultWarning(true);
    else await navigate({ to: SIGNED_IN_PAGE });
  };

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const problem = validateLogin({ username, password });
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
      const answer = await api.post<LoginAnswer>(
        '/api/user/login',
        { username: username.trim(), password },
        { silent: true, query: humanCheck.query },
      );
      if (needsSecondStep(answer)) setSecondStep(answer);
      else await finishSignIn(answer, true);
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };

  const passwordLogin = status?.password_login_enabled !== false;
  if (secondStep)
    return (
      <AuthCard title={t('two-factor:signIn.title')}>
        <SecondStepForm
          step={secondStep}
          passkeysUsable={passkeysUsable}
          onSignedIn={(user) => finishSignIn(user, true)}
          onBack={() => setSecondStep(null)}
        />
      </AuthCard>
    );
  return (
    <AuthCard title={t('auth.loginTitle')}>
      {passwordLogin ? (
        <form onSubmit={(e) => void submit(e)} noValidate className="flex flex-col gap-3">
          <Input
            label={t('auth.usernameOrEmail')}
            name="username"
            autoComplete="username"
            value={username}
            onChange={(e) => setUsername(e.target.value)}
          />
          <Input
            label={t('auth.password')}
            name="password"
            type="password"
            autoComplete="current-password"
            value={password}
            onChange={(e) => setPassword(e.target.value)}
          />
          {humanCheck.widget}
          {error ? (
            <p role="alert" className="text-sm text-red-600 dark:text-red-400">
              {error}
            </p>
          ) : null}
          <Button type="submit" loading={busy}>
            {t('auth.login')}
          </Button>
        </form>
      ) : (
        <p className="text-sm text-gray-500">{t('auth.passwordLoginOff')}</p>
      )}
      {passkeysUsable ? <PasskeySignInButton onSignedIn={(user) => finishSignIn(user)} /> : null}
      <ThirdPartyButtons status={status} />
      <div className="mt-4 flex justify-between text-sm">
        {status?.self_use_mode_enabled ? (
          <span />
        ) : (
          <span>
            {t('auth.noAccount')}{' '}
            <Link to="/register" className="text-blue-600 hover:underline">
              {t('auth.register')}
            </Link>
          </span>
        )}
        <Link to="/reset" className="text-blue-600 hover:underline">
          {t('auth.forgot')}
        </Link>
      </div>
      <ConfirmDialog
        open={defaultWarning}
        title={t('auth.defaultPasswordTitle')}
        message={t('auth.defaultPasswordBody')}
        confirmText={t('auth.changeNow')}
        danger
        onConfirm={() => void navigate({ to: '/personal' })}
        onCancel={() => void navigate({ to: SIGNED_IN_PAGE })}
      />
    </AuthCard>
  );
}
