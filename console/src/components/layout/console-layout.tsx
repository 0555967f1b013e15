import type { ReactNode } from 'react';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { readStored, StorageKey, writeStored } from '../../lib/storage.ts';
import { SideMenu } from './side-menu.tsx';
import { useIsMobile } from './use-mobile.ts';

/** The signed-in area: side menu (collapsible, remembered; a drawer on phones) beside the page. */
export function ConsoleLayout({ children }: { children: ReactNode }) {
  const { t } = useTranslation();
  const mobile = useIsMobile();
  const [collapsed, setCollapsed] = useState(() => readStored(StorageKey.CollapseSidebar) === 'true');
  const [drawerOpen, setDrawerOpen] = useState(false);
  const toggle = () => {
    writeStored(StorageKey.CollapseSidebar, String(!collapsed));
    setCollapsed(!collapsed);
  };
  return (
    <div className="flex min-h-[calc(100vh-3.5rem)]">
      {mobile ? (
        <>
          <button
            type="button"
            data-testid="mobile-menu"
            aria-label={t('nav.openMenu')}
            onClick={() => setDrawerOpen(true)}
            className="fixed bottom-4 left-4 z-30 rounded-full bg-blue-600 px-3 py-2 text-white shadow-lg"
          >
            ☰
          </button>
          {drawerOpen ? (
            <div className="fixed inset-0 z-40 flex">
              <SideMenu
                collapsed={false}
                onToggle={() => setDrawerOpen(false)}
                onNavigate={() => setDrawerOpen(false)}
              />
              <button
                type="button"
                aria-label={t('nav.closeMenu')}
                className="flex-1 bg-black/40"
                onClick={() => setDrawerOpen(false)}
              />
            </div>
          ) : null}
        </>
      ) : (
        <div className="sticky top-14 h-[calc(100vh-3.5rem)]">
          <SideMenu collapsed={collapsed} onToggle={toggle} />
        </div>
      )}
      <main className="min-w-0 flex-1 p-3 sm:p-6">{children}</main>
    </div>
  );
}
