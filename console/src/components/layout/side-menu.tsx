import { Link } from '@tanstack/react-router';
import type { ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { isAdmin, isRoot, type SessionUser, useSessionUser } from '../../lib/session.ts';
import { readStored, readStoredJson, StorageKey } from '../../lib/storage.ts';
import { cx } from '../ui/cx.ts';

export const SIDEBAR_WIDTH = 200;
export const SIDEBAR_COLLAPSED_WIDTH = 60;

interface MenuEntry {
  to: string;
  /** A locale key, or (with `literal`) the text itself, e.g. the name an administrator gave a chat link. */
  label: string;
  literal?: boolean;
  icon: ReactNode;
  visible?: (user: SessionUser | null) => boolean;
  /** Highlight only on this exact path (/user/edit is the user's own profile, not user management). */
  exact?: boolean;
}

const flag = (key: string) => readStored(key) === 'true';

/** The saved chat links the status lists (kept locally under `chats`), as menu entries to /chat/{index}. */
function chatEntries(): MenuEntry[] {
  const chats = readStoredJson<unknown>(StorageKey.Chats);
  if (!Array.isArray(chats)) return [];
  return chats.flatMap((entry, index) => {
    const name = entry && typeof entry === 'object' ? Object.keys(entry)[0] : undefined;
    return name ? [{ to: `/chat/${index}`, label: name, literal: true, icon: '✉' }] : [];
  });
}

/** The side menu groups of spec 03 section 2, with the flags and roles that show each item. */
export function menuGroups(): Array<{ label: string; items: MenuEntry[] }> {
  return [
    { label: '', items: [{ to: '/playground', label: 'menu.playground', icon: '▶' }] },
    { label: 'menu.chat', items: chatEntries() },
    {
      label: 'menu.group.console',
      items: [
        {
          to: '/detail',
          label: 'menu.dashboard',
          icon: '▦',
          visible: () => flag(StorageKey.EnableDataExport),
        },
        { to: '/token', label: 'menu.tokens', icon: '◈' },
        { to: '/log', label: 'menu.logs', icon: '☰' },
        {
          to: '/midjourney',
          label: 'menu.drawing',
          icon: '✎',
          visible: () => flag(StorageKey.EnableDrawing),
        },
        { to: '/task', label: 'menu.tasks', icon: '◷', visible: () => flag(StorageKey.EnableTask) },
        { to: '/batch', label: 'menu.batches', icon: '▤' },
      ],
    },
    {
      label: 'menu.group.admin',
      items: [
        { to: '/channel', label: 'menu.channels', icon: '⇄', visible: isAdmin },
        { to: '/redemption', label: 'menu.redemptions', icon: '▣', visible: isAdmin },
        { to: '/plans', label: 'menu.plans', icon: '▤', visible: isAdmin },
        { to: '/user', label: 'menu.users', icon: '☺', visible: isAdmin, exact: true },
        { to: '/setting', label: 'menu.settings', icon: '⚙', visible: (u) => isAdmin(u) || isRoot(u) },
        { to: '/audit', label: 'menu.audit', icon: '⎙', visible: isRoot },
      ],
    },
    {
      label: 'menu.group.personal',
      items: [
        { to: '/topup', label: 'menu.wallet', icon: '¤' },
        { to: '/personal', label: 'menu.personal', icon: '☉' },
      ],
    },
  ];
}

export function SideMenu({
  collapsed,
  onToggle,
  onNavigate,
}: {
  collapsed: boolean;
  onToggle: () => void;
  onNavigate?: () => void;
}) {
  const { t } = useTranslation();
  const user = useSessionUser();
  return (
    <aside
      data-testid="side-menu"
      style={{ width: collapsed ? SIDEBAR_COLLAPSED_WIDTH : SIDEBAR_WIDTH }}
      className="flex h-full shrink-0 flex-col border-r border-gray-200 bg-white transition-[width] dark:border-gray-800 dark:bg-gray-950"
    >
      <nav className="flex-1 overflow-y-auto py-2">
        {menuGroups().map((group) => {
          const items = group.items.filter((item) => !item.visible || item.visible(user));
          if (items.length === 0) return null;
          return (
            <div key={group.label || 'top'} className="mb-2">
              {group.label && !collapsed ? (
                <div className="px-4 py-1 text-xs uppercase text-gray-400">{t(group.label)}</div>
              ) : null}
              {items.map((item) => (
                <Link
                  key={item.to}
                  to={item.to}
                  title={item.literal ? item.label : t(item.label)}
                  activeOptions={{ exact: item.exact ?? false }}
                  onClick={onNavigate}
                  className={cx(
                    'mx-2 flex items-center gap-3 rounded-md px-3 py-2 text-sm hover:bg-gray-100 dark:hover:bg-gray-800 [&.active]:bg-blue-50 [&.active]:text-blue-700 dark:[&.active]:bg-blue-950 dark:[&.active]:text-blue-300',
                    collapsed && 'justify-center px-0',
                  )}
                >
                  <span aria-hidden="true" className="w-4 text-center">
                    {item.icon}
                  </span>
                  {collapsed ? null : (
                    <span className="truncate">{item.literal ? item.label : t(item.label)}</span>
                  )}
                </Link>
              ))}
            </div>
          );
        })}
      </nav>
      <button
        type="button"
        data-testid="sidebar-toggle"
        onClick={onToggle}
        aria-label={collapsed ? t('nav.expand') : t('nav.collapse')}
        className="border-t border-gray-200 py-2 text-sm hover:bg-gray-100 dark:border-gray-800 dark:hover:bg-gray-800"
      >
        {collapsed ? '»' : '«'}
      </button>
    </aside>
  );
}
