/**
 * Requests per minute, tokens per minute and requests at a time of each user, by group (docs/adr/0028): a row for
 * every user's default and one per group; a group's row replaces the default for its users. Saved as the options
 * `RateLimitUserDefault` and `RateLimitGroups`.
 */
import { useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { LimitFields, type LimitTexts } from '../../../components/limit-fields.tsx';
import { Button } from '../../../components/ui/index.ts';
import { toast } from '../../../lib/toast.ts';
import { type OptionValues, saveFailureText, saveOptions } from '../api/options.ts';
import { DEFAULT_ROW, groupLimitOptions, groupLimitRows } from '../group-limits.ts';

export function GroupLimits({ values }: { values: OptionValues }) {
  const { t } = useTranslation('settings');
  const queryClient = useQueryClient();
  const [rows, setRows] = useState(() => groupLimitRows(values));
  const [wrong, setWrong] = useState<{ group: string; field: keyof LimitTexts } | null>(null);
  const [saving, setSaving] = useState(false);
  // An administrator is listed only the options they may change; without these there is nothing to edit here.
  if (!Object.hasOwn(values, 'RateLimitGroups') || !Object.hasOwn(values, 'RateLimitUserDefault'))
    return null;

  const save = async () => {
    const options = groupLimitOptions(rows);
    if (!options.ok) {
      setWrong({ group: options.group, field: options.field });
      toast.error(t('limits.integer'));
      return;
    }
    setWrong(null);
    const changed = (
      [
        ['RateLimitUserDefault', options.userDefault],
        ['RateLimitGroups', options.groups],
      ] as const
    ).filter(([key, text]) => JSON.stringify(JSON.parse(values[key] || '{}')) !== text);
    if (changed.length === 0) {
      toast.info(t('save.nothingChanged'));
      return;
    }
    setSaving(true);
    const result = await saveOptions(changed);
    setSaving(false);
    if (result.failed.length === 0) toast.success(t('save.saved'));
    else toast.error(saveFailureText(result, t));
    await queryClient.invalidateQueries({ queryKey: ['options'] });
  };

  return (
    <section
      aria-label={t('limits.title')}
      className="rounded-lg border border-gray-200 bg-white p-4 dark:border-gray-700 dark:bg-gray-900"
    >
      <h2 className="text-base font-semibold">{t('limits.title')}</h2>
      <p className="mt-1 text-sm text-gray-500 dark:text-gray-400">{t('limits.description')}</p>
      <div className="mt-3 flex flex-col gap-3">
        {rows.map(([group, texts], index) => (
          <div
            key={group || '*'}
            data-testid={group === DEFAULT_ROW ? 'group-limits-every-user' : `group-limits-${group}`}
          >
            <p className="mb-1 text-sm font-medium">
              {group === DEFAULT_ROW ? t('limits.everyUser') : t('limits.group', { group })}
            </p>
            <LimitFields
              name={`group-limit-${group || '*'}`}
              value={texts}
              onChange={(next) => setRows((all) => all.map((row, i) => (i === index ? [group, next] : row)))}
              labels={{ rpm: t('limits.rpm'), tpm: t('limits.tpm'), concurrency: t('limits.concurrency') }}
              errors={wrong?.group === group ? { [wrong.field]: t('limits.integer') } : {}}
            />
          </div>
        ))}
      </div>
      <div className="mt-3">
        <Button onClick={save} loading={saving}>
          {t('limits.save')}
        </Button>
      </div>
    </section>
  );
}
