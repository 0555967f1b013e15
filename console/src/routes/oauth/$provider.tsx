import { createFileRoute } from '@tanstack/react-router';
import { useTranslation } from 'react-i18next';

/** OAuth callbacks (/oauth/github, /oauth/oidc, /oauth/linuxdo): the flows arrive in a later issue. */
export const Route = createFileRoute('/oauth/$provider')({
  component: function OAuthCallback() {
    const { t } = useTranslation();
    return <main className="p-8 text-center">{t('oauth.processing')}</main>;
  },
});
