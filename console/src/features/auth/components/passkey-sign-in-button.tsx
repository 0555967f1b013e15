import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Button } from '../../../components/ui/button.tsx';
import { signInWithPasskey } from '../api/passkey-sign-in.ts';
import type { SignedIn } from '../api/second-step.ts';
import { passkeyErrorText } from '../passkeys.ts';
import { AlertText } from './alert-text.tsx';

/** Password-less sign-in: the browser offers the passkeys it holds for this site, and one signs in. */
export function PasskeySignInButton({ onSignedIn }: { onSignedIn: (user: SignedIn) => Promise<void> }) {
  const { t } = useTranslation('two-factor');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const signIn = async () => {
    setBusy(true);
    setError(null);
    try {
      await onSignedIn(await signInWithPasskey());
    } catch (err) {
      setError(passkeyErrorText(err, t));
    } finally {
      setBusy(false);
    }
  };
  return (
    <div className="mt-3 flex flex-col gap-2">
      <Button variant="secondary" loading={busy} onClick={() => void signIn()}>
        {t('signIn.withPasskey')}
      </Button>
      <AlertText text={error} />
    </div>
  );
}
