import { useQuery } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { PageSpinner } from '../../../components/ui/index.ts';
import { isRoot, useSessionUser } from '../../../lib/session.ts';
import { GroupQuotaWindowsSection } from '../../quota-windows/components/group-quota-windows-section.tsx';
import { optionOwnersQuery } from '../api/option-owners.ts';
import { optionsQuery } from '../api/options.ts';
import { SETTINGS_TABS, type SettingsTab } from '../tabs.ts';
import { GroupLimits } from './group-limits.tsx';
import { modelSections, OperationSettings, rateLimitFields } from './operation-settings.tsx';
import { OptionSection } from './option-section.tsx';
import { OtherSettings } from './other-settings.tsx';
import { SystemSettings } from './system-settings.tsx';

/** /setting: the tabs of specs 01 and 02; system and other are for root only. */
export function SettingsPage({
  tab,
  onTabChange,
}: {
  tab: SettingsTab;
  onTabChange: (tab: SettingsTab) => void;
}) {
  const { t } = useTranslation('settings');
  const user = useSessionUser();
  const options = useQuery(optionsQuery);
  // Whole options a GatewayOption resource sets: Git's, so the server refuses a save of them (docs/adr/0017).
  const managed = (useQuery(optionOwnersQuery).data ?? []).filter((o) => o.entry === '');
  const tabs = SETTINGS_TABS.filter((id) => isRoot(user) || (id !== 'system' && id !== 'other'));
  const active = tabs.includes(tab) ? tab : 'operation';
  return (
    <section>
      <h1 className="mb-4 text-xl font-semibold">{t('title')}</h1>
      <div role="tablist" className="mb-4 flex flex-wrap gap-2 border-b dark:border-gray-700">
        {tabs.map((id) => (
          <button
            key={id}
            type="button"
            role="tab"
            aria-selected={active === id}
            className={`px-3 py-2 text-sm ${active === id ? 'border-b-2 border-blue-600 font-medium' : ''}`}
            onClick={() => onTabChange(id)}
          >
            {t(`tab.${id}`)}
          </button>
        ))}
      </div>
      {managed.length > 0 ? (
        <div role="note" className="mb-4 rounded border border-blue-200 bg-blue-50 p-3 text-sm text-blue-900">
          <p className="font-medium">{t('managed.title')}</p>
          <ul className="mt-1 list-inside list-disc">
            {managed.map((o) => (
              <li key={o.key}>
                {t('managed.item', { key: o.key, resource: `${o.kind} ${o.namespace}/${o.name}` })}
              </li>
            ))}
          </ul>
        </div>
      ) : null}
      {options.isPending ? (
        <PageSpinner />
      ) : options.isError ? (
        <p role="alert">{t('loadFailed')}</p>
      ) : active === 'operation' ? (
        <OperationSettings values={options.data} />
      ) : active === 'ratelimit' ? (
        <div className="flex flex-col gap-4">
          <OptionSection title={t('section.ratelimit')} fields={rateLimitFields} values={options.data} />
          <GroupLimits values={options.data} />
          <GroupQuotaWindowsSection values={options.data} />
        </div>
      ) : active === 'models' ? (
        <div className="flex flex-col gap-4">
          {modelSections.map((s) => (
            <OptionSection key={s.id} title={t(`section.${s.id}`)} fields={s.fields} values={options.data} />
          ))}
        </div>
      ) : active === 'system' ? (
        <SystemSettings values={options.data} />
      ) : (
        <OtherSettings values={options.data} />
      )}
    </section>
  );
}
