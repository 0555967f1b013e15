/** What each quota window has spent, with a bar: one line each in a list, or with what is left on a page. */
import { useTranslation } from 'react-i18next';
import { cx } from '../../../components/ui/index.ts';
import type { QuotaDisplay } from '../../../lib/format.ts';
import { fillOf, type QuotaWindowStateView, resetText, windowAmount } from '../rules.ts';

/** "$1.20 of $5.00 today", "37 of 200 requests in the last 5 hours". */
export function useSpentText(display: QuotaDisplay) {
  const { t } = useTranslation('quota-windows');
  return (state: QuotaWindowStateView) =>
    t(`spent.${state.unit}.${state.period}`, {
      used: windowAmount(state.unit, state.used, display),
      limit: windowAmount(state.unit, state.limit, display),
      hours: state.hours,
    });
}

/** "resets 00:00", or for a rolling window "frees up from 16:05" (nothing shown while it has spent nothing). */
export function useResetText(now?: number | undefined) {
  const { t } = useTranslation('quota-windows');
  return (state: QuotaWindowStateView) => {
    if (state.period !== 'rolling') return t('resets', { time: resetText(state.reset_at, now) });
    return state.used > 0 ? t('frees', { time: resetText(state.reset_at, now) }) : '';
  };
}

function Bar({ state }: { state: QuotaWindowStateView }) {
  const fill = fillOf(state);
  return (
    <div className="h-1.5 w-full overflow-hidden rounded bg-gray-200 dark:bg-gray-700" aria-hidden="true">
      <div
        className={cx(
          'h-full rounded',
          state.left <= 0 ? 'bg-red-500' : fill >= 0.8 ? 'bg-yellow-500' : 'bg-blue-500',
        )}
        style={{ width: `${Math.round(fill * 100)}%` }}
      />
    </div>
  );
}

export interface QuotaWindowStatesProps {
  states: readonly QuotaWindowStateView[];
  display: QuotaDisplay;
  /** One short line per window (a table cell); otherwise what is left is shown too. */
  compact?: boolean | undefined;
  /** What to say when there is no window. */
  empty?: string | undefined;
  /** The moment reset times are read against, in ms (tests). */
  now?: number | undefined;
}

export function QuotaWindowStates({ states, display, compact, empty, now }: QuotaWindowStatesProps) {
  const { t } = useTranslation('quota-windows');
  const spent = useSpentText(display);
  const reset = useResetText(now);
  if (states.length === 0)
    return empty ? <p className="text-sm text-gray-500 dark:text-gray-400">{empty}</p> : null;
  return (
    <ul className={cx('flex flex-col', compact ? 'min-w-44 gap-1' : 'gap-3')}>
      {states.map((state) => {
        const when = reset(state);
        return (
          <li key={`${state.unit}:${state.period}:${state.hours ?? ''}`} className="flex flex-col gap-0.5">
            <span className={compact ? 'text-xs' : 'text-sm'}>
              {spent(state)}
              {compact && when ? `, ${when}` : ''}
            </span>
            <Bar state={state} />
            {compact ? null : (
              <span className="text-xs text-gray-500 dark:text-gray-400">
                {t('left', { left: windowAmount(state.unit, state.left, display) })}
                {when ? ` · ${when}` : ''}
              </span>
            )}
          </li>
        );
      })}
    </ul>
  );
}
