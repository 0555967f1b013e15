import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Button, EmptyState, Spinner, Tag } from '../../../components/ui/index.ts';
import { groupRatioColor } from '../../../lib/format.ts';
import { fetchSelfGroups, fetchSelfModels, selfGroupsQueryKey, selfModelsQueryKey } from '../api/pricing.ts';

/** Spec 01 section 9: the model list shows 10 tags before a "more" control. */
export const MODELS_SHOWN = 10;

/** The price tab's read-only part: the user's group with its ratio, and the models the user can call. */
export function PriceInfo({ group }: { group: string }) {
  const { t } = useTranslation('personal');
  const groups = useQuery({ queryKey: selfGroupsQueryKey, queryFn: fetchSelfGroups });
  const models = useQuery({ queryKey: selfModelsQueryKey, queryFn: fetchSelfModels });
  const [showAll, setShowAll] = useState(false);

  if (groups.isPending || models.isPending) return <Spinner />;
  const ratio = groups.data?.[group]?.ratio ?? 1;
  const list = models.data ?? [];
  const shown = showAll ? list : list.slice(0, MODELS_SHOWN);

  return (
    <div className="flex flex-col gap-3 text-sm">
      <p className="flex flex-wrap items-center gap-2">
        <span className="text-gray-500">{t('price.group')}</span>
        <Tag>{group}</Tag>
        <span className="text-gray-500">{t('price.ratio')}</span>
        <Tag color={groupRatioColor(ratio)}>
          <span data-testid="group-ratio">{`${ratio}x`}</span>
        </Tag>
      </p>
      <p className="text-xs text-gray-500">{t('price.ratioHint')}</p>
      <div>
        <p className="mb-1 text-gray-500">{t('price.models', { n: list.length })}</p>
        {models.isError ? (
          <p role="alert" className="text-red-600">
            {t('price.modelsFailed')}
          </p>
        ) : list.length === 0 ? (
          <EmptyState title={t('price.noModels')}>
            <p className="text-xs">{t('price.noModelsHint')}</p>
          </EmptyState>
        ) : (
          <ul aria-label={t('price.modelList')} className="flex flex-wrap gap-1">
            {shown.map((model) => (
              <li key={model}>
                <Tag className="break-all">{model}</Tag>
              </li>
            ))}
            {list.length > MODELS_SHOWN ? (
              <li>
                <Button size="sm" variant="ghost" onClick={() => setShowAll(!showAll)}>
                  {showAll ? t('price.less') : t('price.more', { n: list.length - MODELS_SHOWN })}
                </Button>
              </li>
            ) : null}
          </ul>
        )}
      </div>
    </div>
  );
}
