import { type ReactNode, useEffect, useRef, useState } from 'react';
import type { SiteStatus } from '../../../lib/status.ts';
import { getTheme } from '../../../lib/theme.ts';

/** The part of Cloudflare Turnstile's browser API the console uses (explicit rendering). */
export interface TurnstileApi {
  render: (
    element: HTMLElement,
    options: {
      sitekey: string;
      callback: (token: string) => void;
      'expired-callback'?: () => void;
      'error-callback'?: () => void;
      theme?: 'light' | 'dark' | 'auto';
    },
  ) => string | undefined;
  remove: (widgetId: string) => void;
}

declare global {
  interface Window {
    turnstile?: TurnstileApi;
  }
}

/** https://developers.cloudflare.com/turnstile/get-started/client-side-rendering/#explicitly-render-the-turnstile-widget */
export const TURNSTILE_SCRIPT_URL = 'https://challenges.cloudflare.com/turnstile/v0/api.js?render=explicit';

let loading: Promise<TurnstileApi> | null = null;

/** Loads Cloudflare's script once (only on the screens that show the widget, and only when it is switched on). */
function loadTurnstile(): Promise<TurnstileApi> {
  if (window.turnstile) return Promise.resolve(window.turnstile);
  loading ??= new Promise<TurnstileApi>((resolve, reject) => {
    const script = document.createElement('script');
    script.src = TURNSTILE_SCRIPT_URL;
    script.async = true;
    script.onload = () =>
      window.turnstile ? resolve(window.turnstile) : reject(new Error('turnstile did not load'));
    script.onerror = () => {
      loading = null;
      script.remove();
      reject(new Error('turnstile did not load'));
    };
    document.head.appendChild(script);
  });
  return loading;
}

/** The Turnstile widget; `onToken` receives the answer, and '' when it expires or fails. */
export function TurnstileWidget({ siteKey, onToken }: { siteKey: string; onToken: (token: string) => void }) {
  const box = useRef<HTMLDivElement>(null);
  const callback = useRef(onToken);
  callback.current = onToken;
  useEffect(() => {
    let widgetId: string | undefined;
    let cancelled = false;
    loadTurnstile().then(
      (turnstile) => {
        if (cancelled || !box.current) return;
        widgetId = turnstile.render(box.current, {
          sitekey: siteKey,
          theme: getTheme(),
          callback: (token) => callback.current(token),
          'expired-callback': () => callback.current(''),
          'error-callback': () => callback.current(''),
        });
      },
      () => {
        // without the script the token stays empty and submitting says the check is still running
      },
    );
    return () => {
      cancelled = true;
      if (widgetId !== undefined) window.turnstile?.remove(widgetId);
    };
  }, [siteKey]);
  return <div ref={box} data-testid="turnstile" className="flex min-h-[65px] justify-center" />;
}

export interface HumanCheck {
  /** The widget to place in the form, or null when the check is off. */
  widget: ReactNode;
  /** The check is on and has not answered yet: the form must not be sent (spec 01 and 02 section 5). */
  pending: boolean;
  /** The `turnstile` query parameter for the checked endpoints. */
  query: { turnstile?: string };
}

/** The human check of the sign-in, registration and reset screens, as the status object switches it on. */
export function useHumanCheck(status: SiteStatus | undefined): HumanCheck {
  const [token, setToken] = useState('');
  const enabled = Boolean(status?.turnstile_check);
  const siteKey = status?.turnstile_site_key ?? '';
  return {
    widget: enabled ? <TurnstileWidget siteKey={siteKey} onToken={setToken} /> : null,
    pending: enabled && token === '',
    query: enabled ? { turnstile: token } : {},
  };
}
