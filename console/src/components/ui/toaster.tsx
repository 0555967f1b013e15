import { useEffect, useState } from 'react';
import { dismissToast, subscribeToasts, type ToastItem, type ToastKind } from '../../lib/toast.ts';
import { cx } from './cx.ts';

const kindClass: Record<ToastKind, string> = {
  success: 'border-green-500 bg-green-50 text-green-900 dark:bg-green-950 dark:text-green-100',
  error: 'border-red-500 bg-red-50 text-red-900 dark:bg-red-950 dark:text-red-100',
  info: 'border-blue-500 bg-blue-50 text-blue-900 dark:bg-blue-950 dark:text-blue-100',
  warning: 'border-yellow-500 bg-yellow-50 text-yellow-900 dark:bg-yellow-950 dark:text-yellow-100',
};

/** Renders the toast queue at the top centre. Mount once, in the root route. */
export function Toaster() {
  const [items, setItems] = useState<readonly ToastItem[]>([]);
  useEffect(() => subscribeToasts(setItems), []);
  return (
    <div
      aria-live="polite"
      className="pointer-events-none fixed inset-x-0 top-3 z-[60] flex flex-col items-center gap-2 px-3"
    >
      {items.map((item) => (
        <div
          key={item.id}
          role={item.kind === 'error' ? 'alert' : 'status'}
          data-toast={item.kind}
          className={cx(
            'pointer-events-auto flex max-w-md items-start gap-3 rounded-md border-l-4 px-4 py-2 text-sm shadow',
            kindClass[item.kind],
          )}
        >
          <span className="flex-1 break-words">{item.text}</span>
          <button
            type="button"
            className="opacity-60 hover:opacity-100"
            aria-label="×"
            onClick={() => dismissToast(item.id)}
          >
            ×
          </button>
        </div>
      ))}
    </div>
  );
}
