import { Dialog, DialogPanel, DialogTitle } from '@headlessui/react';
import type { ReactNode } from 'react';
import { useTranslation } from 'react-i18next';

export interface SideSheetProps {
  open: boolean;
  onClose: () => void;
  title: ReactNode;
  children?: ReactNode;
  footer?: ReactNode;
  /** 600 px instead of 36rem (the channel drawer, spec 02 section 9). */
  wide?: boolean;
  testId?: string;
}

/** A panel sliding in from the right; full width on phones. */
export function SideSheet({ open, onClose, title, children, footer, wide, testId }: SideSheetProps) {
  const { t } = useTranslation();
  return (
    <Dialog open={open} onClose={onClose} className="relative z-50">
      <div className="fixed inset-0 bg-black/40" aria-hidden="true" />
      <div className={`fixed inset-y-0 right-0 flex w-full ${wide ? 'sm:w-[600px]' : 'max-w-xl'}`}>
        <DialogPanel
          data-testid={testId}
          className="flex w-full flex-col bg-white shadow-xl dark:bg-gray-900"
        >
          <div className="flex items-center justify-between border-b border-gray-200 px-5 py-4 dark:border-gray-700">
            <DialogTitle className="text-lg font-semibold">{title}</DialogTitle>
            <button
              type="button"
              onClick={onClose}
              aria-label={t('common.close')}
              className="rounded p-1 hover:bg-gray-100 dark:hover:bg-gray-800"
            >
              ✕
            </button>
          </div>
          <div className="flex-1 overflow-y-auto px-5 py-4">{children}</div>
          {footer ? (
            <div className="flex justify-end gap-2 border-t border-gray-200 px-5 py-3 dark:border-gray-700">
              {footer}
            </div>
          ) : null}
        </DialogPanel>
      </div>
    </Dialog>
  );
}
