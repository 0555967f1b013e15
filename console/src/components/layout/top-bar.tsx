import { Menu, MenuButton, MenuItem, MenuItems } from '@headlessui/react';
import { useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate } from '@tanstack/react-router';
import { useTranslation } from 'react-i18next';
import { api } from '../../lib/api.ts';
import { setSessionUser, useSessionUser } from '../../lib/session.ts';
import { useStatus } from '../../lib/status.ts';
import { useTheme } from '../../lib/theme.ts';
import { toast } from '../../lib/toast.ts';
import { Tag } from '../ui/tag.tsx';

/** The festive item of the top bar shows on 1 January only. */
export const isNewYearsDay = (d: Date) => d.getMonth() === 0 && d.getDate() === 1;

const navLink = 'rounded px-2 py-1 text-sm hover:bg-gray-100 dark:hover:bg-gray-800 [&.active]:font-semibold';

export function TopBar({ onToggleMenu }: { onToggleMenu?: () => void }) {
  const { t, i18n } = useTranslation();
  const { data: status } = useStatus();
  const user = useSessionUser();
  const [theme, setTheme] = useTheme();
  const navigate = useNavigate();
  const queryClient = useQueryClient();

  const logout = async () => {
    try {
      await api.get('/api/user/logout', { silent: true });
    } catch {
      // signing out locally is what matters
    }
    setSessionUser(null);
    queryClient.clear();
    toast.success(t('auth.loggedOut'));
    await navigate({ to: '/login' });
  };

  const name = status?.system_name || t('app.name');
  return (
    <header className="sticky top-0 z-40 flex h-14 items-center gap-2 border-b border-gray-200 bg-white/90 px-3 backdrop-blur dark:border-gray-800 dark:bg-gray-950/90">
      {onToggleMenu ? (
        <button
          type="button"
          aria-label={t('nav.openMenu')}
          onClick={onToggleMenu}
          className="rounded p-1 hover:bg-gray-100 sm:hidden dark:hover:bg-gray-800"
        >
          ☰
        </button>
      ) : null}
      <Link to="/" className="flex items-center gap-2 font-semibold">
        {status?.logo ? <img src={status.logo} alt="" className="h-7 w-7 rounded" /> : null}
        <span className="hidden sm:inline">{name}</span>
      </Link>
      {status?.self_use_mode_enabled ? (
        <Tag color="purple">{t('badge.selfUse')}</Tag>
      ) : status?.demo_site_enabled ? (
        <Tag color="yellow">{t('badge.demo')}</Tag>
      ) : null}
      <nav className="flex items-center gap-1 overflow-x-auto">
        <Link to="/" className={navLink} activeOptions={{ exact: true }}>
          {t('nav.home')}
        </Link>
        <Link to="/token" className={navLink}>
          {t('nav.console')}
        </Link>
        <Link to="/pricing" className={navLink}>
          {t('nav.pricing')}
        </Link>
        {status?.docs_link ? (
          <a href={status.docs_link} target="_blank" rel="noreferrer" className={navLink}>
            {t('nav.docs')}
          </a>
        ) : null}
      </nav>
      <div className="ml-auto flex items-center gap-1">
        {isNewYearsDay(new Date()) ? (
          <button
            type="button"
            data-testid="festive"
            onClick={() => toast.success(t('nav.happyNewYear'))}
            className="rounded p-2 text-sm text-red-600"
          >
            {t('nav.happyNewYear')}
          </button>
        ) : null}
        <button
          type="button"
          data-testid="theme-switch"
          aria-label={theme === 'dark' ? t('nav.theme.light') : t('nav.theme.dark')}
          onClick={() => setTheme(theme === 'dark' ? 'light' : 'dark')}
          className="rounded p-2 hover:bg-gray-100 dark:hover:bg-gray-800"
        >
          {theme === 'dark' ? '☀' : '☾'}
        </button>
        <Menu as="div" className="relative">
          <MenuButton
            aria-label={t('nav.language')}
            data-testid="language-menu"
            className="rounded p-2 text-sm hover:bg-gray-100 dark:hover:bg-gray-800"
          >
            {i18n.language === 'en' ? 'EN' : '中'}
          </MenuButton>
          <MenuItems
            anchor="bottom end"
            className="z-50 mt-1 w-32 rounded-md border border-gray-200 bg-white p-1 shadow-lg dark:border-gray-700 dark:bg-gray-900"
          >
            {(['zh', 'en'] as const).map((lng) => (
              <MenuItem key={lng}>
                <button
                  type="button"
                  onClick={() => void i18n.changeLanguage(lng)}
                  className="block w-full rounded px-3 py-1.5 text-left text-sm data-focus:bg-gray-100 dark:data-focus:bg-gray-800"
                >
                  {t(`lang.${lng}`)}
                </button>
              </MenuItem>
            ))}
          </MenuItems>
        </Menu>
        {user ? (
          <Menu as="div" className="relative">
            <MenuButton
              aria-label={t('nav.userMenu')}
              data-testid="user-menu"
              className="flex items-center gap-1 rounded px-2 py-1 text-sm hover:bg-gray-100 dark:hover:bg-gray-800"
            >
              <span className="flex h-7 w-7 items-center justify-center rounded-full bg-blue-600 text-white">
                {user.username.slice(0, 1).toUpperCase()}
              </span>
              <span className="hidden max-w-24 truncate sm:inline">{user.display_name || user.username}</span>
            </MenuButton>
            <MenuItems
              anchor="bottom end"
              className="z-50 mt-1 w-40 rounded-md border border-gray-200 bg-white p-1 shadow-lg dark:border-gray-700 dark:bg-gray-900"
            >
              <MenuItem>
                <Link
                  to="/personal"
                  className="block rounded px-3 py-1.5 text-sm data-focus:bg-gray-100 dark:data-focus:bg-gray-800"
                >
                  {t('nav.personal')}
                </Link>
              </MenuItem>
              <MenuItem>
                <button
                  type="button"
                  onClick={() => void logout()}
                  className="block w-full rounded px-3 py-1.5 text-left text-sm data-focus:bg-gray-100 dark:data-focus:bg-gray-800"
                >
                  {t('nav.logout')}
                </button>
              </MenuItem>
            </MenuItems>
          </Menu>
        ) : (
          <>
            <Link to="/login" className={navLink}>
              {t('nav.login')}
            </Link>
            {status?.self_use_mode_enabled ? null : (
              <Link to="/register" className={`${navLink} hidden sm:inline`}>
                {t('nav.register')}
              </Link>
            )}
          </>
        )}
      </div>
    </header>
  );
}
