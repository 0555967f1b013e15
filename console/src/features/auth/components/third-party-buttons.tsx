import { useCallback, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Button } from '../../../components/ui/button.tsx';
import { api } from '../../../lib/api.ts';
import type { SessionUser } from '../../../lib/session.ts';
import type { SiteStatus } from '../../../lib/status.ts';
import { toast } from '../../../lib/toast.ts';
import { type RedirectProvider, startRedirectSignIn } from '../third-party.ts';
import { useSignIn } from '../use-sign-in.ts';
import { type TelegramFields, TelegramWidget } from './telegram-widget.tsx';
import { WeChatCodeDialog } from './wechat-code-dialog.tsx';

/**
 * Third-party sign-in buttons, shown according to the status flags: GitHub, OIDC and LinuxDO leave for the
 * provider, WeChat asks for the official account's code, Telegram shows its own widget.
 */
export function ThirdPartyButtons({ status }: { status: SiteStatus | undefined }) {
  const { t } = useTranslation();
  const signIn = useSignIn();
  const [leaving, setLeaving] = useState<RedirectProvider | null>(null);
  const [wechatOpen, setWeChatOpen] = useState(false);
  const [telegramShown, setTelegramShown] = useState(false);

  // The widget hands over the signed fields; the server checks them and answers the user.
  const telegramAuth = useCallback(
    (fields: TelegramFields) => {
      api.get<SessionUser>('/api/oauth/telegram/login', { query: fields }).then(
        (user) => signIn(user),
        () => {}, // the request client has shown why
      );
    },
    [signIn],
  );

  if (!status) return null;
  const redirect = (provider: RedirectProvider) => {
    setLeaving(provider);
    void startRedirectSignIn(provider, status).then((left) => {
      if (!left) setLeaving(null);
    });
  };
  const showTelegram = () => {
    if (status.telegram_bot_name) setTelegramShown(true);
    else toast.error(t('oauth.notConfigured'));
  };
  const providers = [
    { on: status.github_oauth, label: 'auth.withGitHub', id: 'github', go: () => redirect('github') },
    { on: status.oidc_enabled, label: 'auth.withOidc', id: 'oidc', go: () => redirect('oidc') },
    { on: status.linuxdo_oauth, label: 'auth.withLinuxDO', id: 'linuxdo', go: () => redirect('linuxdo') },
    { on: status.wechat_login, label: 'auth.withWeChat', id: 'wechat', go: () => setWeChatOpen(true) },
    { on: status.telegram_oauth, label: 'auth.withTelegram', id: 'telegram', go: showTelegram },
  ].filter((p) => p.on);
  if (providers.length === 0) return null;
  return (
    <div className="mt-4 flex flex-col gap-2">
      <div className="text-center text-xs text-gray-400">{t('auth.or')}</div>
      {providers.map((p) =>
        p.id === 'telegram' && telegramShown ? (
          <TelegramWidget key={p.id} botName={status.telegram_bot_name} onAuth={telegramAuth} />
        ) : (
          <Button
            key={p.id}
            variant="secondary"
            data-provider={p.id}
            loading={leaving === p.id}
            onClick={p.go}
          >
            {t(p.label)}
          </Button>
        ),
      )}
      {status.wechat_login ? (
        <WeChatCodeDialog
          open={wechatOpen}
          onClose={() => setWeChatOpen(false)}
          qrcode={status.wechat_qrcode}
          endpoint="/api/oauth/wechat"
          onDone={(user) => {
            setWeChatOpen(false);
            if (user) void signIn(user);
          }}
        />
      ) : null}
    </div>
  );
}
