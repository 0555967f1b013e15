import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Button } from '../../../components/ui/index.ts';
import type { Metric, ModelTotals } from '../buckets.ts';

/** How many models show before "show all". */
const SHOWN_MODELS = 10;

/** Usage per model as horizontal bars, largest first, with each model's share of the total. */
export function ModelBreakdown({
  models,
  metric,
  format,
  colorOf,
}: {
  models: ModelTotals[];
  metric: Metric;
  format: (value: number) => string;
  colorOf: (model: string) => string;
}) {
  const { t } = useTranslation('dashboard');
  const [expanded, setExpanded] = useState(false);
  const total = models.reduce((sum, m) => sum + m[metric], 0);
  const largest = Math.max(0, ...models.map((m) => m[metric]));
  const shown = expanded ? models : models.slice(0, SHOWN_MODELS);
  return (
    <div>
      <ul className="space-y-2">
        {shown.map((m) => {
          const value = m[metric];
          const share = total > 0 ? (value / total) * 100 : 0;
          return (
            <li key={m.model} className="text-sm">
              <div className="flex items-baseline justify-between gap-2">
                <span className="min-w-0 break-all">{m.model}</span>
                <span className="shrink-0 tabular-nums text-gray-600 dark:text-gray-300">
                  {format(value)} · {share.toFixed(1)}%
                </span>
              </div>
              <div className="mt-1 h-2 rounded bg-gray-100 dark:bg-gray-800" aria-hidden="true">
                <div
                  className="h-2 rounded"
                  style={{
                    width: `${largest > 0 ? Math.max(1, (value / largest) * 100) : 0}%`,
                    backgroundColor: colorOf(m.model),
                  }}
                />
              </div>
            </li>
          );
        })}
      </ul>
      {models.length > SHOWN_MODELS ? (
        <Button variant="ghost" size="sm" className="mt-2" onClick={() => setExpanded((v) => !v)}>
          {expanded ? t('breakdown.less') : t('breakdown.all', { count: models.length })}
        </Button>
      ) : null}
    </div>
  );
}
