import { useEffect, useRef } from 'react';

/** The signed fields of the user, as the query the server checks them from. */
export type TelegramFields = Record<string, string>;

declare global {
  interface Window {
    /** What Telegram's widget calls with the user (ids and dates as numbers). */
    turnpikeTelegramAuth?: (user: Record<string, string | number>) => void;
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
  onAuth: (fields: TelegramFields) => void;
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
    const callback = (user: Record<string, string | number>) =>
      onAuth(Object.fromEntries(Object.entries(user).map(([key, value]) => [key, String(value)])));
    window.turnpikeTelegramAuth = callback;
    script.dataset.onauth = 'turnpikeTelegramAuth(user)';
    element.appendChild(script);
    return () => {
      element.replaceChildren();
      if (window.turnpikeTelegramAuth === callback) delete window.turnpikeTelegramAuth;
    };
  }, [botName, onAuth]);
  return <div ref={holder} data-testid="telegram-widget" className="flex justify-center" />;
}
