import { useEffect, useRef } from 'react';

/** What Telegram's login widget hands its callback: the signed fields of the user. */
export type TelegramUser = Record<string, string | number>;

declare global {
  interface Window {
    turnpikeTelegramAuth?: (user: TelegramUser) => void;
  }
}

/**
 * Telegram's own login button (its widget script), calling `onAuth` with the signed fields; the caller hands
 * them to the server from this page. (Telegram's redirect mode would arrive from another site, without the
 * session cookie, which is same-site only.)
 */
export function TelegramWidget({
  botName,
  onAuth,
}: {
  botName: string;
  onAuth: (user: TelegramUser) => void;
}) {
  const holder = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = holder.current;
    if (!element) return;
    const script = document.createElement('script');
    script.src = 'https://telegram.org/js/telegram-widget.js?22';
    script.async = true;
    script.dataset.telegramLogin = botName;
    script.dataset.size = 'large';
    window.turnpikeTelegramAuth = onAuth;
    script.dataset.onauth = 'turnpikeTelegramAuth(user)';
    element.appendChild(script);
    return () => {
      element.replaceChildren();
      if (window.turnpikeTelegramAuth === onAuth) delete window.turnpikeTelegramAuth;
    };
  }, [botName, onAuth]);
  return <div ref={holder} data-testid="telegram-widget" className="flex justify-center" />;
}
