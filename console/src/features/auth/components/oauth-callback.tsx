import { Link, useNavigate } from '@tanstack/react-router';
import type { SecondStepRequired } from '@turnpike/core/contracts/two-factor';
import { useEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Spinner } from '../../../components/ui/index.ts';
import { useStatus } from '../../../lib/status.ts';
import { toast } from '../../../lib/toast.ts';
import type { SignedIn } from '../api/second-step.ts';
import { canUsePasskeys } from '../passkeys.ts';
import { finishRedirectSignIn, isRedirectProvider } from '../third-party.ts';
import { useSignIn } from '../use-sign-in.ts';
import { AuthCard } from './auth-card.tsx';
import { SecondStepForm } from './second-step-form.tsx';

/**
 * Where GitHub, OIDC and LinuxDO send the browser back (/oauth/<provider>?code=&state=): the code is handed to
 * the server once (a code is single-use, so no retry), which signs in, binds, or asks a user with a second factor
 * for it (the same form as after a password). A failure is shown with the way
 * back to the sign-in page. Both ends replace this page in the history: going back must not spend the code again.
 */
export function OAuthCallback({
  provider,
  code,
  state,
}: {
  provider: string;
  code: string | undefined;
  state: string | undefined;
}) {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const signIn = useSignIn();
  const [error, setError] = useState<string | null>(null);
  // A user with a second factor is asked for it here, as after a password (docs/adr/0044).
  const [secondStep, setSecondStep] = useState<SecondStepRequired | null>(null);
  // React runs effects twice in development (StrictMode); the server must still see the code once
  const sent = useRef(false);

  useEffect(() => {
    if (sent.current) return;
    sent.current = true;
    if (!isRedirectProvider(provider)) {
      setError(t('oauth.unknownProvider', { provider }));
      return;
    }
    if (!code || !state) {
      setError(t('oauth.missingCode'));
      return;
    }
    finishRedirectSignIn(provider, code, state).then(
      async (outcome) => {
        if (!outcome.bound && 'secondStep' in outcome) return setSecondStep(outcome.secondStep);
        if (!outcome.bound) return signIn(outcome.user, { replace: true });
        toast.success(t('oauth.bound'));
        await navigate({ to: '/personal', replace: true });
      },
      (err: unknown) => setError(err instanceof Error ? err.message : String(err)),
    );
  }, [provider, code, state, navigate, signIn, t]);

  if (secondStep)
    return (
      <OwedSecondStep
        step={secondStep}
        onSignedIn={(user) => signIn(user, { replace: true })}
        onBack={() => void navigate({ to: '/login', replace: true })}
      />
    );
  return (
    <main className="flex flex-col items-center gap-4 p-8 text-center">
      {error ? (
        <>
          <p role="alert" className="text-red-600 dark:text-red-400">
            {error}
          </p>
          <Link to="/login" className="text-blue-600 underline dark:text-blue-400">
            {t('oauth.backToLogin')}
          </Link>
        </>
      ) : (
        <>
          <Spinner size="lg" className="text-blue-600" />
          <p>{t('oauth.processing')}</p>
        </>
      )}
    </main>
  );
}

/** The second step a third-party sign-in owes; the site's status (passkeys usable) is read only then. */
function OwedSecondStep({
  step,
  onSignedIn,
  onBack,
}: {
  step: SecondStepRequired;
  onSignedIn: (user: SignedIn) => Promise<void>;
  onBack: () => void;
}) {
  const { t } = useTranslation();
  const { data: status } = useStatus();
  return (
    <AuthCard title={t('two-factor:signIn.title')}>
      <SecondStepForm
        step={step}
        passkeysUsable={canUsePasskeys(status)}
        onSignedIn={onSignedIn}
        onBack={onBack}
      />
    </AuthCard>
  );
}
