import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Button } from '../../../components/ui/index.ts';
import { formatQuota } from '../../../lib/format.ts';
import { useQuotaDisplay } from '../../../lib/status.ts';
import { toast } from '../../../lib/toast.ts';
import { checkIn, checkinQueryKey, fetchCheckin } from '../api/checkin.ts';

/**
 * The daily check-in (the reference's): a button while today's is not done, the range, and this month's history.
 * Renders nothing while an administrator has check-ins off.
 */
export function CheckinCard() {
  const { t } = useTranslation('checkin');
  const queryClient = useQueryClient();
  const display = useQuotaDisplay();
  const status = useQuery({ queryKey: checkinQueryKey, queryFn: fetchCheckin, retry: false });
  const [busy, setBusy] = useState(false);
  if (!status.data?.enabled) return null;
  const { stats, min_quota: min, max_quota: max } = status.data;

  const submit = async () => {
    setBusy(true);
    try {
      const result = await checkIn();
      toast.success(t('awarded', { quota: formatQuota(result.quota_awarded, display) }));
      // The balance changed too.
      await Promise.all([
        queryClient.invalidateQueries({ queryKey: checkinQueryKey }),
        queryClient.invalidateQueries({ queryKey: ['self'] }),
      ]);
    } catch {
      // the request client has shown the message
    } finally {
      setBusy(false);
    }
  };

  return (
    <section
      aria-label={t('title')}
      className="rounded-lg border border-gray-200 bg-white p-4 dark:border-gray-700 dark:bg-gray-900"
    >
      <div className="mb-3 flex flex-wrap items-center justify-between gap-2">
        <h2 className="text-base font-semibold">{t('title')}</h2>
        <Button disabled={stats.checked_in_today || busy} onClick={() => void submit()}>
          {stats.checked_in_today ? t('done') : t('button')}
        </Button>
      </div>
      <p className="text-sm text-gray-500 dark:text-gray-400">
        {t('range', { min: formatQuota(min, display), max: formatQuota(max, display) })}{' '}
        {t('total', { count: stats.total_checkins, quota: formatQuota(stats.total_quota, display) })}
      </p>
      <h3 className="mt-3 text-sm font-medium">{t('count', { count: stats.checkin_count })}</h3>
      {stats.records.length === 0 ? (
        <p className="text-sm text-gray-500">{t('none')}</p>
      ) : (
        <table className="mt-1 w-full max-w-sm text-sm">
          <thead>
            <tr className="text-left text-gray-500">
              <th className="font-normal">{t('col.date')}</th>
              <th className="font-normal">{t('col.quota')}</th>
            </tr>
          </thead>
          <tbody>
            {stats.records.map((record) => (
              <tr key={record.checkin_date}>
                <td>{record.checkin_date}</td>
                <td>{formatQuota(record.quota_awarded, display)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
