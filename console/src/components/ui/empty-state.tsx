import type { ReactNode } from 'react';
import { useTranslation } from 'react-i18next';

export function EmptyState({ title, children }: { title?: ReactNode; children?: ReactNode }) {
  const { t } = useTranslation();
  return (
    <div className="flex flex-col items-center justify-center gap-2 py-10 text-center text-gray-500 dark:text-gray-400">
      <svg
        aria-hidden="true"
        viewBox="0 0 24 24"
        className="h-10 w-10"
        fill="none"
        stroke="currentColor"
        strokeWidth="1.5"
      >
        <path d="M3 7l9-4 9 4v10l-9 4-9-4V7z M3 7l9 4 9-4 M12 11v10" />
      </svg>
      <p className="font-medium">{title ?? t('common.empty')}</p>
      {children}
    </div>
  );
}
