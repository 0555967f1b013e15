import type { SecondStepRequired } from '@turnpike/core/contracts/two-factor';
import { type FormEvent, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Button } from '../../../components/ui/button.tsx';
import { Input } from '../../../components/ui/input.tsx';
import { signInWithPasskey } from '../api/passkey-sign-in.ts';
import { completeWithCode, type SignedIn } from '../api/second-step.ts';
import { passkeyErrorText } from '../passkeys.ts';
import { AlertText } from './alert-text.tsx';

/**
 * The second step of a password sign-in: the six digits of the authenticator app, a backup code, or one of the
 * user's passkeys (docs/adr/0044). `onSignedIn` gets the user once the server has started the session.
 */
export function SecondStepForm({
  step,
  passkeysUsable,
  onSignedIn,
  onBack,
}: {
  step: SecondStepRequired;
  passkeysUsable: boolean;
  onSignedIn: (user: SignedIn) => Promise<void> | void;
  onBack: () => void;
}) {
  const { t } = useTranslation('two-factor');
  const [code, setCode] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState<'code' | 'passkey' | null>(null);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (!code.trim()) {
      setError(t('signIn.codeRequired'));
      return;
    }
    setError(null);
    setBusy('code');
    try {
      await onSignedIn(await completeWithCode(step.flow_token, code.trim()));
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(null);
    }
  };

  const answerWithPasskey = async () => {
    setError(null);
    setBusy('passkey');
    try {
      await onSignedIn(await signInWithPasskey(step.flow_token));
    } catch (err) {
      setError(passkeyErrorText(err, t));
    } finally {
      setBusy(null);
    }
  };

  return (
    <form onSubmit={(e) => void submit(e)} noValidate className="flex flex-col gap-3">
      <p className="text-sm text-gray-600 dark:text-gray-300">{t('signIn.prompt')}</p>
      <Input
        label={t('signIn.code')}
        name="code"
        autoComplete="one-time-code"
        inputMode="text"
        autoFocus
        value={code}
        hint={t('signIn.codeHint')}
        onChange={(e) => setCode(e.target.value)}
      />
      <AlertText text={error} />
      <Button type="submit" loading={busy === 'code'} disabled={busy !== null}>
        {t('signIn.verify')}
      </Button>
      {step.passkey && passkeysUsable ? (
        <Button
          variant="secondary"
          loading={busy === 'passkey'}
          disabled={busy !== null}
          onClick={() => void answerWithPasskey()}
        >
          {t('signIn.usePasskey')}
        </Button>
      ) : null}
      <button type="button" className="text-sm text-blue-600 hover:underline" onClick={onBack}>
        {t('signIn.back')}
      </button>
    </form>
  );
}
