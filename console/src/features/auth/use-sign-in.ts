import { useNavigate } from '@tanstack/react-router';
import { useCallback } from 'react';
import { useTranslation } from 'react-i18next';
import { type SessionUser, setSessionUser } from '../../lib/session.ts';
import { toast } from '../../lib/toast.ts';

/** Where a sign-in lands. */
export const SIGNED_IN_PAGE = '/token';
/** Where an administrator goes first when the site requires two-factor sign-in of them (docs/adr/0044). */
export const ENROLMENT_PAGE = '/two-factor';

/**
 * Keeps a signed-in user the way every sign-in does (password, third party): the short user in local storage
 * and a toast. Navigation is the caller's, so the password form can stop for its default-password warning.
 */
export function useRememberSignIn(): (user: SessionUser) => void {
  const { t } = useTranslation();
  return useCallback(
    (user: SessionUser) => {
      setSessionUser(user);
      toast.success(t('auth.loginSuccess'));
    },
    [t],
  );
}

/** A complete sign-in: remember the user, then go to the landing page (`replace` drops the current entry). */
export function useSignIn(): (user: SessionUser, options?: { replace?: boolean }) => Promise<void> {
  const remember = useRememberSignIn();
  const navigate = useNavigate();
  return useCallback(
    async (user, { replace = false } = {}) => {
      remember(user);
      await navigate({ to: SIGNED_IN_PAGE, replace });
    },
    [remember, navigate],
  );
}
