import { useTranslation } from 'react-i18next';
import { cx } from '../ui/cx.ts';

/** The page sizes every table offers. */
export const PAGE_SIZE_OPTIONS = [10, 20, 50, 100] as const;

export interface PagerProps {
  /** 1-based page. */
  page: number;
  pageSize: number;
  total: number;
  onPageChange: (page: number) => void;
  onPageSizeChange: (size: number) => void;
  /** The text before the buttons; defaults to "{{total}} items". */
  summary?: string;
  /** Allow "next" even on the last known page (lists whose total grows as pages are loaded). */
  hasMore?: boolean;
}

/** Previous / next buttons and a page-size choice, for tables that are not a DataTable. */
export function Pager({
  page,
  pageSize,
  total,
  onPageChange,
  onPageSizeChange,
  summary,
  hasMore,
}: PagerProps) {
  const { t } = useTranslation();
  const pages = Math.max(1, Math.ceil(total / pageSize));
  const nextDisabled = page >= pages && !hasMore;
  return (
    <nav className="flex flex-wrap items-center justify-end gap-2 text-sm" aria-label={t('table.pagination')}>
      <span className="text-gray-500">{summary ?? t('table.total', { total })}</span>
      <button
        type="button"
        className={cx('rounded border px-2 py-1 dark:border-gray-600', page <= 1 && 'opacity-40')}
        disabled={page <= 1}
        onClick={() => onPageChange(page - 1)}
      >
        {t('table.previous')}
      </button>
      <span>
        {page} / {hasMore ? `${pages}+` : pages}
      </span>
      <button
        type="button"
        className={cx('rounded border px-2 py-1 dark:border-gray-600', nextDisabled && 'opacity-40')}
        disabled={nextDisabled}
        onClick={() => onPageChange(page + 1)}
      >
        {t('table.next')}
      </button>
      <select
        aria-label={t('table.pageSize')}
        className="rounded border bg-transparent px-2 py-1 dark:border-gray-600"
        value={pageSize}
        onChange={(e) => onPageSizeChange(Number(e.target.value))}
      >
        {PAGE_SIZE_OPTIONS.map((size) => (
          <option key={size} value={size}>
            {t('table.perPage', { size })}
          </option>
        ))}
      </select>
    </nav>
  );
}
