import { useTranslation } from 'react-i18next';
import { Tag } from '../../../components/ui/index.ts';
import type { OptionOwner } from '../api/option-owners.ts';

/**
 * Under a price map's JSON field: the entries Kubernetes resources own (docs/adr/0017), each with its resource.
 * They are Git's: a save that changes one is refused, and the rest of the map stays editable.
 */
export function OwnedEntries({ optionKey, owners }: { optionKey: string; owners: readonly OptionOwner[] }) {
  const { t } = useTranslation('settings');
  if (owners.length === 0) return null;
  return (
    <div
      role="note"
      aria-label={t('pricing.managedEntries', { key: optionKey })}
      className="mt-1 rounded border border-blue-200 bg-blue-50 p-2 text-xs text-blue-900 dark:border-blue-900 dark:bg-blue-950 dark:text-blue-100"
    >
      <p className="flex items-center gap-2">
        <Tag color="blue">{t('pricing.managed')}</Tag>
        <span>{t('pricing.managedEntriesHint')}</span>
      </p>
      <ul className="mt-1 list-inside list-disc">
        {owners.map((o) => (
          <li key={o.entry}>
            {t('managed.item', { key: o.entry, resource: `${o.kind} ${o.namespace}/${o.name}` })}
          </li>
        ))}
      </ul>
    </div>
  );
}
