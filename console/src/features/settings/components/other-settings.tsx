import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Button } from '../../../components/ui/index.ts';
import { formatTimestamp } from '../../../lib/format.ts';
import { useStatus } from '../../../lib/status.ts';
import { toast } from '../../../lib/toast.ts';
import type { OptionValues } from '../api/options.ts';
import type { OptionField } from '../option-fields.ts';
import { OptionSection } from './option-section.tsx';

const area = (key: string): OptionField => ({ key, kind: 'textarea' });

/** Other settings (root): system info with the update check, then the branding and text options. */
export function OtherSettings({ values }: { values: OptionValues }) {
  const { t } = useTranslation('settings');
  const status = useStatus();
  const [latest, setLatest] = useState<string | null>(null);
  const [checking, setChecking] = useState(false);
  // The server names the release feed (UPDATE_CHECK_URL); a deployment without one offers no check.
  const feed = status.data?.update_check_url ?? '';

  const checkUpdate = async () => {
    if (!feed) return;
    setChecking(true);
    try {
      const response = await fetch(feed);
      if (!response.ok) throw new Error(String(response.status));
      const release = (await response.json()) as { tag_name?: string };
      setLatest(release.tag_name ?? '');
    } catch {
      toast.error(t('update.failed'));
    } finally {
      setChecking(false);
    }
  };

  return (
    <div className="flex flex-col gap-4">
      <section
        aria-label={t('section.systemInfo')}
        className="rounded-lg border border-gray-200 p-4 text-sm dark:border-gray-700"
      >
        <h2 className="mb-3 text-base font-semibold">{t('section.systemInfo')}</h2>
        <p>
          {t('info.version')}: {status.data?.version ?? '-'}
        </p>
        <p>
          {t('info.startTime')}: {status.data ? formatTimestamp(status.data.start_time) : '-'}
        </p>
        {latest !== null ? (
          <p>
            {latest && latest !== status.data?.version
              ? t('update.available', { version: latest })
              : t('update.latest')}
          </p>
        ) : null}
        {feed ? (
          <Button className="mt-2" variant="secondary" loading={checking} onClick={() => void checkUpdate()}>
            {t('update.check')}
          </Button>
        ) : null}
      </section>
      <OptionSection title={t('section.notice')} fields={[area('Notice')]} values={values} />
      <OptionSection
        title={t('section.branding')}
        fields={[
          { key: 'SystemName', kind: 'text' },
          { key: 'Logo', kind: 'text' },
        ]}
        values={values}
      />
      <OptionSection title={t('section.homePage')} fields={[area('HomePageContent')]} values={values} />
      <OptionSection title={t('section.about')} fields={[area('About')]} values={values} />
      <OptionSection title={t('section.footer')} fields={[area('Footer')]} values={values} />
    </div>
  );
}
