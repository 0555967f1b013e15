import { useQuery } from '@tanstack/react-query';
import { useId } from 'react';
import { useTranslation } from 'react-i18next';
import { Input, Select, Textarea } from '../../../components/ui/index.ts';
import { userGroupsQuery, userModelsQuery } from '../api/playground.ts';
import { clampTemperature, type PlaygroundSettings, type SettingsProblem, TEMPERATURE } from '../messages.ts';

interface SettingsPanelProps {
  settings: PlaygroundSettings;
  onChange: (patch: Partial<PlaygroundSettings>) => void;
  problems: Partial<Record<'model' | 'maxTokens', SettingsProblem>>;
  disabled: boolean;
}

/** Group, model (type to search), temperature, max tokens and system prompt. */
export function SettingsPanel({ settings, onChange, problems, disabled }: SettingsPanelProps) {
  const { t } = useTranslation('playground');
  const listId = useId();
  const sliderId = useId();
  const groups = useQuery(userGroupsQuery);
  const models = useQuery(userModelsQuery);

  const groupOptions = [
    { value: '', label: t('settings.groupDefault') },
    ...Object.entries(groups.data ?? {}).map(([name, info]) => ({
      value: name,
      label: t('settings.groupOption', { name, desc: info.desc || name, ratio: info.ratio }),
    })),
  ];

  return (
    <section
      aria-label={t('settings.title')}
      className="flex flex-col gap-4 rounded-lg border border-gray-200 bg-white p-4 dark:border-gray-700 dark:bg-gray-900"
    >
      <h2 className="text-base font-semibold">{t('settings.title')}</h2>
      <Select
        label={t('settings.group')}
        value={settings.group}
        options={groupOptions}
        disabled={disabled}
        onChange={(e) => onChange({ group: e.target.value })}
      />
      <div>
        <Input
          label={t('settings.model')}
          list={listId}
          value={settings.model}
          disabled={disabled}
          autoComplete="off"
          placeholder={models.isLoading ? t('settings.modelsLoading') : t('settings.modelPlaceholder')}
          error={problems.model ? t('error.modelRequired') : null}
          hint={
            models.isSuccess && models.data.length === 0 ? t('settings.noModels') : t('settings.modelHint')
          }
          onChange={(e) => onChange({ model: e.target.value })}
        />
        <datalist id={listId}>
          {(models.data ?? []).map((m) => (
            <option key={m} value={m} />
          ))}
        </datalist>
      </div>
      <div className="flex flex-col gap-1">
        <label
          htmlFor={sliderId}
          className="flex justify-between text-sm font-medium text-gray-700 dark:text-gray-300"
        >
          <span>{t('settings.temperature')}</span>
          <output htmlFor={sliderId} className="tabular-nums text-gray-500 dark:text-gray-400">
            {settings.temperature.toFixed(1)}
          </output>
        </label>
        <input
          id={sliderId}
          type="range"
          min={TEMPERATURE.min}
          max={TEMPERATURE.max}
          step={TEMPERATURE.step}
          value={settings.temperature}
          disabled={disabled}
          className="w-full accent-blue-600"
          onChange={(e) => onChange({ temperature: clampTemperature(Number(e.target.value)) })}
        />
      </div>
      <Input
        label={t('settings.maxTokens')}
        inputMode="numeric"
        value={settings.maxTokens}
        disabled={disabled}
        error={problems.maxTokens ? t('error.maxTokens') : null}
        hint={t('settings.maxTokensHint')}
        onChange={(e) => onChange({ maxTokens: e.target.value })}
      />
      <Textarea
        label={t('settings.systemPrompt')}
        value={settings.systemPrompt}
        disabled={disabled}
        rows={5}
        onChange={(e) => onChange({ systemPrompt: e.target.value })}
      />
    </section>
  );
}
