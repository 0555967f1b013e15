/** The wallet's card of the user's budget windows: their own and their group's, each with used, left and reset. */
import { useTranslation } from 'react-i18next';
import type { QuotaDisplay } from '../../../lib/format.ts';
import type { QuotaWindowStateView } from '../rules.ts';
import { QuotaWindowStates } from './window-states.tsx';

export interface WalletWindowsProps {
  self: {
    group?: string | undefined;
    quota_window_states?: readonly QuotaWindowStateView[] | undefined;
    group_quota_window_states?: readonly QuotaWindowStateView[] | undefined;
  };
  display: QuotaDisplay;
  /** The moment reset times are read against, in ms (tests). */
  now?: number | undefined;
}

export function WalletWindows({ self, display, now }: WalletWindowsProps) {
  const { t } = useTranslation('quota-windows');
  const own = self.quota_window_states ?? [];
  const ofGroup = self.group_quota_window_states ?? [];
  return (
    <section
      aria-label={t('wallet.title')}
      className="rounded-lg border border-gray-200 bg-white p-4 dark:border-gray-700 dark:bg-gray-900"
    >
      <h2 className="mb-3 text-base font-semibold">{t('wallet.title')}</h2>
      {own.length === 0 && ofGroup.length === 0 ? (
        <p className="text-sm text-gray-600 dark:text-gray-300">{t('editor.empty')}</p>
      ) : (
        <div className="flex flex-col gap-4">
          <p className="text-xs text-gray-500 dark:text-gray-400">{t('wallet.note')}</p>
          {own.length > 0 ? (
            <div>
              <h3 className="mb-2 text-sm font-medium">{t('wallet.own')}</h3>
              <QuotaWindowStates states={own} display={display} now={now} />
            </div>
          ) : null}
          {ofGroup.length > 0 ? (
            <div>
              <h3 className="mb-2 text-sm font-medium">{t('wallet.group', { group: self.group ?? '' })}</h3>
              <QuotaWindowStates states={ofGroup} display={display} now={now} />
            </div>
          ) : null}
        </div>
      )}
    </section>
  );
}
