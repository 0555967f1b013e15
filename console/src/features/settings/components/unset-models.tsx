import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { PAGE_SIZE_OPTIONS } from '../../../components/data-table/index.ts';
import { EmptyState, Spinner } from '../../../components/ui/index.ts';
import { fetchEnabledModels, type OptionValues } from '../api/options.ts';
import { rowsFromOptions } from '../pricing.ts';

/** Models served by an enabled channel that have neither a ratio nor a fixed price. */
export function unsetModels(enabled: readonly string[], values: OptionValues): string[] {
  const priced = new Set(
    rowsFromOptions(values)
      .filter((r) => r.price !== undefined || r.ratio !== undefined)
      .map((r) => r.name),
  );
  return [...new Set(enabled)].filter((m) => !priced.has(m)).sort();
}

export function UnsetModels({ values }: { values: OptionValues }) {
  const { t } = useTranslation('settings');
  const [size, setSize] = useState<number>(PAGE_SIZE_OPTIONS[0]);
  const [page, setPage] = useState(1);
  const enabled = useQuery({ queryKey: ['models-enabled'], queryFn: fetchEnabledModels });
  if (enabled.isPending) return <Spinner />;
  const models = unsetModels(enabled.data ?? [], values);
  if (models.length === 0) return <EmptyState title={t('unset.none')} />;
  const pages = Math.max(1, Math.ceil(models.length / size));
  const current = Math.min(page, pages);
  return (
    <section aria-label={t('ratioTab.unset_models')} className="flex flex-col gap-2 text-sm">
      <p>{t('unset.help', { count: models.length })}</p>
      <ul className="divide-y rounded border dark:divide-gray-800 dark:border-gray-700">
        {models.slice((current - 1) * size, current * size).map((m) => (
          <li key={m} className="px-3 py-2 font-mono">
            {m}
          </li>
        ))}
      </ul>
      <nav className="flex items-center justify-end gap-2">
        <button type="button" disabled={current <= 1} onClick={() => setPage(current - 1)}>
          {t('common:table.previous')}
        </button>
        <span>
          {current} / {pages}
        </span>
        <button type="button" disabled={current >= pages} onClick={() => setPage(current + 1)}>
          {t('common:table.next')}
        </button>
        <select
          aria-label={t('common:table.pageSize')}
          value={size}
          onChange={(e) => {
            setSize(Number(e.target.value));
            setPage(1);
          }}
        >
          {PAGE_SIZE_OPTIONS.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
      </nav>
    </section>
  );
}
