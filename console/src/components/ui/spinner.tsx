import { useTranslation } from 'react-i18next';
import { cx } from './cx.ts';

export function Spinner({ size = 'md', className }: { size?: 'sm' | 'md' | 'lg'; className?: string }) {
  const { t } = useTranslation();
  const dims = size === 'sm' ? 'h-4 w-4' : size === 'lg' ? 'h-10 w-10' : 'h-6 w-6';
  return (
    <span
      role="status"
      aria-label={t('common.loading')}
      className={cx(
        'inline-block animate-spin rounded-full border-2 border-current border-t-transparent',
        dims,
        className,
      )}
    />
  );
}

/** A centred spinner for a page or a panel that is loading. */
export function PageSpinner() {
  return (
    <div className="flex min-h-40 items-center justify-center text-blue-600">
      <Spinner size="lg" />
    </div>
  );
}
