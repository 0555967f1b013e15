import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef } from 'react';
import { useTranslation } from 'react-i18next';
import { toast } from '../../../lib/toast.ts';
import { fetchTestProgress, testAllChannels } from '../api/channels.ts';
import { progressPercent, type TestAllProgress } from '../validation.ts';

/** How often the page asks for the progress while a run goes on. */
export const PROGRESS_POLL_MS = 1500;

/**
 * Starting a test of every channel and following it: the progress is polled while a run goes on (one started
 * here, by another admin or by the periodic loop), and when a run this page watched ends, the list is refreshed
 * and a summary is shown.
 */
export function useTestAll(onFinished: () => void) {
  const { t } = useTranslation('channels');
  const queryClient = useQueryClient();
  const progress = useQuery({
    queryKey: ['channel-test-progress'],
    queryFn: fetchTestProgress,
    retry: false,
    refetchInterval: (query) => (query.state.data?.running ? PROGRESS_POLL_MS : false),
  });
  const watched = useRef(false);
  const running = progress.data?.running ?? false;

  useEffect(() => {
    if (running) {
      watched.current = true;
      return;
    }
    if (!watched.current || !progress.data) return;
    watched.current = false;
    toast.success(t('testAll.finished', { count: progress.data.done, failed: progress.data.failed }));
    onFinished();
  }, [running, progress.data, onFinished, t]);

  const start = async () => {
    const outcome = await testAllChannels();
    if (outcome.kind === 'unavailable') {
      toast.warning(t('test.unavailable'));
      return;
    }
    if (outcome.kind === 'failed') toast.error(t('test.failed', { message: outcome.message }));
    else toast.info(t('test.allStarted'));
    // a refused start usually means a run is going already: follow that one
    await queryClient.invalidateQueries({ queryKey: ['channel-test-progress'] });
  };

  return { progress: progress.data, running, start };
}

/** The bar shown while every channel is being tested. */
export function TestAllBanner({ progress }: { progress: TestAllProgress | undefined }) {
  const { t } = useTranslation('channels');
  if (!progress?.running) return null;
  const percent = progressPercent(progress);
  return (
    <div
      role="status"
      aria-live="polite"
      className="mb-3 rounded-lg border border-blue-200 bg-blue-50 p-3 text-sm text-blue-900 dark:border-blue-900 dark:bg-blue-900/20 dark:text-blue-200"
    >
      <div className="mb-2 flex flex-wrap justify-between gap-2">
        <span>{t('testAll.running', { done: progress.done, total: progress.total })}</span>
        {progress.failed > 0 ? (
          <span className="text-red-700 dark:text-red-400">
            {t('testAll.failed', { count: progress.failed })}
          </span>
        ) : null}
      </div>
      <div
        role="progressbar"
        aria-label={t('testAll.label')}
        aria-valuemin={0}
        aria-valuemax={100}
        aria-valuenow={percent}
        className="h-2 w-full overflow-hidden rounded bg-blue-100 dark:bg-blue-950"
      >
        <div className="h-full bg-blue-600 transition-all" style={{ width: `${percent}%` }} />
      </div>
    </div>
  );
}
