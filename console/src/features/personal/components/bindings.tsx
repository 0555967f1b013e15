import { useTranslation } from 'react-i18next';
import { Button } from '../../../components/ui/index.ts';
import type { SiteStatus } from '../../../lib/status.ts';
import type { SelfUser } from '../api/self.ts';

interface ThirdParty {
  label: string;
  /** The status flag that turns this sign-in method on. */
  flag: keyof SiteStatus;
  value: (user: SelfUser) => string;
}

const THIRD_PARTIES: ThirdParty[] = [
  { label: 'binding.github', flag: 'github_oauth', value: (u) => u.github_id },
  { label: 'binding.oidc', flag: 'oidc_enabled', value: (u) => u.oidc_id },
  { label: 'binding.linuxdo', flag: 'linuxdo_oauth', value: (u) => u.linux_do_id },
  { label: 'binding.wechat', flag: 'wechat_login', value: (u) => u.wechat_id },
  { label: 'binding.telegram', flag: 'telegram_oauth', value: (u) => u.telegram_id },
];

/**
 * Email (bindable here) and the third-party accounts. A third-party row shows when its sign-in is switched on
 * or the user is already bound; binding itself comes with the third-party flows, so its button says so.
 */
export function BindingList({
  user,
  status,
  onBindEmail,
}: {
  user: SelfUser;
  status: SiteStatus | undefined;
  onBindEmail: () => void;
}) {
  const { t } = useTranslation('personal');
  const rows = THIRD_PARTIES.filter((p) => Boolean(status?.[p.flag]) || p.value(user) !== '');
  const item = 'flex items-center justify-between gap-2 rounded border px-3 py-2 dark:border-gray-700';
  return (
    <ul className="grid gap-2 text-sm md:grid-cols-2">
      <li className={item}>
        <span className="min-w-0 break-all">
          {t('binding.email')}: {user.email || t('binding.none')}
        </span>
        <Button size="sm" variant="secondary" onClick={onBindEmail}>
          {user.email ? t('binding.change') : t('binding.bind')}
        </Button>
      </li>
      {rows.map((p) => {
        const value = p.value(user);
        return (
          <li key={p.label} className={item}>
            <span className="min-w-0 break-all">
              {t(p.label)}: {value || t('binding.none')}
            </span>
            {value ? (
              <span className="text-xs text-green-700 dark:text-green-400">{t('binding.bound')}</span>
            ) : (
              <Button size="sm" variant="secondary" disabled title={t('binding.notAvailable')}>
                {t('binding.notAvailable')}
              </Button>
            )}
          </li>
        );
      })}
    </ul>
  );
}
