import { useCallback, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Button } from '../../../components/ui/index.ts';
import { api } from '../../../lib/api.ts';
import type { SiteStatus } from '../../../lib/status.ts';
import { toast } from '../../../lib/toast.ts';
import { type TelegramFields, TelegramWidget } from '../../auth/components/telegram-widget.tsx';
import { WeChatCodeDialog } from '../../auth/components/wechat-code-dialog.tsx';
import { type RedirectProvider, startRedirectSignIn } from '../../auth/third-party.ts';
import type { SelfUser } from '../api/self.ts';

interface ThirdParty {
  id: RedirectProvider | 'wechat' | 'telegram';
  label: string;
  /** The status flag that turns this sign-in method on. */
  flag: keyof SiteStatus;
  value: (user: SelfUser) => string;
}

const THIRD_PARTIES: ThirdParty[] = [
  { id: 'github', label: 'binding.github', flag: 'github_oauth', value: (u) => u.github_id },
  { id: 'oidc', label: 'binding.oidc', flag: 'oidc_enabled', value: (u) => u.oidc_id },
  { id: 'linuxdo', label: 'binding.linuxdo', flag: 'linuxdo_oauth', value: (u) => u.linux_do_id },
  { id: 'wechat', label: 'binding.wechat', flag: 'wechat_login', value: (u) => u.wechat_id },
  { id: 'telegram', label: 'binding.telegram', flag: 'telegram_oauth', value: (u) => u.telegram_id },
];

/**
 * Email and the third-party accounts. A third-party row shows when its sign-in is switched on or the user is
 * already bound. Binding goes through the provider as a sign-in does: the server binds because the browser is
 * signed in (GitHub, OIDC and LinuxDO come back through /oauth/<provider>, Telegram's widget comes back here).
 */
export function BindingList({
  user,
  status,
  onBindEmail,
  onBound,
}: {
  user: SelfUser;
  status: SiteStatus | undefined;
  onBindEmail: () => void;
  /** A binding finished without leaving the page (WeChat); the user should be read again. */
  onBound: () => void;
}) {
  const { t } = useTranslation('personal');
  const [leaving, setLeaving] = useState<RedirectProvider | null>(null);
  const [wechatOpen, setWeChatOpen] = useState(false);
  const [telegramShown, setTelegramShown] = useState(false);
  const rows = THIRD_PARTIES.filter((p) => Boolean(status?.[p.flag]) || p.value(user) !== '');

  const bindTelegram = useCallback(
    (fields: TelegramFields) => {
      api.get('/api/oauth/telegram/bind', { query: fields }).then(
        () => {
          setTelegramShown(false);
          toast.success(t('common:oauth.bound'));
          onBound();
        },
        () => {}, // the request client has shown why
      );
    },
    [onBound, t],
  );

  const bind = (id: ThirdParty['id'], on: SiteStatus) => {
    if (id === 'wechat') setWeChatOpen(true);
    else if (id === 'telegram') {
      if (on.telegram_bot_name) setTelegramShown(true);
      else toast.error(t('common:oauth.notConfigured'));
    } else {
      setLeaving(id);
      void startRedirectSignIn(id, on).then((left) => {
        if (!left) setLeaving(null);
      });
    }
  };

  const item = 'flex items-center justify-between gap-2 rounded border px-3 py-2 dark:border-gray-700';
  return (
    <>
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
          const name = t(p.label);
          let action = null;
          if (value) {
            action = <span className="text-xs text-green-700 dark:text-green-400">{t('binding.bound')}</span>;
          } else if (p.id === 'telegram' && telegramShown && status) {
            action = <TelegramWidget botName={status.telegram_bot_name} onAuth={bindTelegram} />;
          } else if (status?.[p.flag]) {
            action = (
              <Button
                size="sm"
                variant="secondary"
                aria-label={t('binding.bindProvider', { name })}
                loading={leaving === p.id}
                onClick={() => bind(p.id, status)}
              >
                {t('binding.bind')}
              </Button>
            );
          }
          return (
            <li key={p.id} className={item}>
              <span className="min-w-0 break-all">
                {name}: {value || t('binding.none')}
              </span>
              {action}
            </li>
          );
        })}
      </ul>
      {status?.wechat_login ? (
        <WeChatCodeDialog
          open={wechatOpen}
          onClose={() => setWeChatOpen(false)}
          qrcode={status.wechat_qrcode}
          endpoint="/api/oauth/wechat/bind"
          onDone={() => {
            setWeChatOpen(false);
            toast.success(t('common:oauth.bound'));
            onBound();
          }}
        />
      ) : null}
    </>
  );
}
