import { useQuery } from '@tanstack/react-query';
import { useNavigate } from '@tanstack/react-router';
import { useEffect } from 'react';
import { useTranslation } from 'react-i18next';
import { toast } from '../../../lib/toast.ts';
import { firstEnabledKeyQuery } from '../api/chat.ts';

/** How long the "no enabled token" message stays before the token page opens (spec 02 section 8). */
export const NO_TOKEN_REDIRECT_MS = 1500;

/**
 * The key of the user's first enabled token, fetched only when `wanted`. With no enabled token, says so and
 * opens the token page after 1.5 s, where the user can enable or create one.
 */
export function useChatKey(wanted: boolean) {
  const { t } = useTranslation('chat');
  const navigate = useNavigate();
  const query = useQuery({ ...firstEnabledKeyQuery, enabled: wanted });
  const noToken = query.isSuccess && query.data === null;

  useEffect(() => {
    if (!noToken) return;
    toast.error(t('error.noToken'));
    const timer = setTimeout(() => void navigate({ to: '/token' }), NO_TOKEN_REDIRECT_MS);
    return () => clearTimeout(timer);
  }, [noToken, navigate, t]);

  return query;
}
