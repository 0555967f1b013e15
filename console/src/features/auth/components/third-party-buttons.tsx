import { useTranslation } from 'react-i18next';
import { Button } from '../../../components/ui/button.tsx';
import type { SiteStatus } from '../../../lib/status.ts';
import { toast } from '../../../lib/toast.ts';

/** Third-party sign-in buttons, shown according to the status flags; the flows arrive in a later issue. */
export function ThirdPartyButtons({ status }: { status: SiteStatus | undefined }) {
  const { t } = useTranslation();
  if (!status) return null;
  const providers = [
    { on: status.github_oauth, label: 'auth.withGitHub', id: 'github' },
    { on: status.oidc_enabled, label: 'auth.withOidc', id: 'oidc' },
    { on: status.linuxdo_oauth, label: 'auth.withLinuxDO', id: 'linuxdo' },
    { on: status.wechat_login, label: 'auth.withWeChat', id: 'wechat' },
    { on: status.telegram_oauth, label: 'auth.withTelegram', id: 'telegram' },
  ].filter((p) => p.on);
  if (providers.length === 0) return null;
  return (
    <div className="mt-4 flex flex-col gap-2">
      <div className="text-center text-xs text-gray-400">{t('auth.or')}</div>
      {providers.map((p) => (
        <Button
          key={p.id}
          variant="secondary"
          data-provider={p.id}
          onClick={() => toast.info(t('auth.thirdPartyLater'))}
        >
          {t(p.label)}
        </Button>
      ))}
    </div>
  );
}
