import { useQuery, useQueryClient } from '@tanstack/react-query';
import { type ShapeOptionKey, shapeTextProblem } from '@turnpike/core/options/shape-entries';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Button, ConfirmDialog, Input } from '../../../components/ui/index.ts';
import { toast } from '../../../lib/toast.ts';
import { optionOwnersQuery, ownedEntriesOf } from '../api/option-owners.ts';
import { clearLogsBefore, type OptionValues, resetModelRatio } from '../api/options.ts';
import type { OptionField } from '../option-fields.ts';
import { validateLogClearTime } from '../validation.ts';
import { OptionSection } from './option-section.tsx';
import { OwnedEntries } from './owned-entries.tsx';
import { PricingEditor } from './pricing-editor.tsx';
import { UnsetModels } from './unset-models.tsx';

const sw = (key: string): OptionField => ({ key, kind: 'switch' });
const num = (key: string, extra: Partial<OptionField> = {}): OptionField => ({
  key,
  kind: 'number',
  min: 0,
  integer: true,
  ...extra,
});
const json = (key: string): OptionField => ({ key, kind: 'json' });
/** A price-shape map: checked in the browser as the option registry checks it, so a bad one saves nothing. */
const shape = (key: ShapeOptionKey, hint: string): OptionField => ({
  key,
  kind: 'json',
  hint,
  check: (text) => shapeTextProblem(key, text),
});

export const operationSections: { id: string; fields: OptionField[] }[] = [
  {
    id: 'opGeneral',
    fields: [
      { key: 'TopUpLink', kind: 'text' },
      { key: 'general_setting.docs_link', kind: 'text' },
      num('QuotaPerUnit', { min: 1, hint: 'hint.quotaPerUnit' }),
      num('RetryTimes'),
      sw('RetryEmptyResponseEnabled'),
      num('FirstTokenTimeoutSeconds', { hint: 'hint.zeroOff' }),
      num('StreamingTimeoutSeconds', { hint: 'hint.zeroOff' }),
      sw('DisplayInCurrencyEnabled'),
      sw('DisplayTokenStatEnabled'),
      sw('DefaultCollapseSidebar'),
      sw('DemoSiteEnabled'),
      sw('SelfUseModeEnabled'),
      json('Chats'),
    ],
  },
  {
    id: 'drawing',
    fields: [
      sw('DrawingEnabled'),
      sw('TaskEnabled'),
      sw('MjNotifyEnabled'),
      sw('MjAccountFilterEnabled'),
      sw('MjForwardUrlEnabled'),
      sw('MjModeClearEnabled'),
      sw('MjActionCheckSuccessEnabled'),
    ],
  },
  {
    id: 'sensitive',
    fields: [
      sw('CheckSensitiveEnabled'),
      sw('CheckSensitiveOnPromptEnabled'),
      sw('CheckSensitiveOnCompletionEnabled'),
      sw('StopOnSensitiveEnabled'),
      { key: 'SensitiveWords', kind: 'textarea', hint: 'hint.onePerLine' },
    ],
  },
  { id: 'logs', fields: [sw('LogConsumeEnabled'), num('LogRetentionDays', { hint: 'hint.zeroKeep' })] },
  {
    id: 'dashboard',
    fields: [
      sw('DataExportEnabled'),
      num('DataExportInterval', { min: 1, hint: 'hint.minutes' }),
      {
        key: 'DataExportDefaultTime',
        kind: 'select',
        options: [
          { value: 'hour', label: 'time.hour' },
          { value: 'day', label: 'time.day' },
          { value: 'week', label: 'time.week' },
        ],
      },
    ],
  },
  {
    id: 'monitoring',
    fields: [
      num('ChannelDisableThreshold', { integer: false, hint: 'hint.seconds' }),
      sw('AutomaticDisableChannelEnabled'),
      sw('AutomaticEnableChannelEnabled'),
      { key: 'AutomaticDisableKeywords', kind: 'textarea', hint: 'hint.onePerLine' },
      sw('ChannelCooldownEnabled'),
      num('ChannelCooldownFailures', { min: 1 }),
      num('ChannelCooldownWindowSeconds', { min: 1, hint: 'hint.seconds' }),
      num('ChannelCooldownMinutes', { min: 1, hint: 'hint.minutes' }),
      { key: 'ChannelAffinity', kind: 'json', hint: 'hint.channelAffinity' },
    ],
  },
  {
    id: 'quota',
    fields: [
      num('QuotaForNewUser'),
      num('PreConsumedQuota'),
      num('QuotaForInviter'),
      num('QuotaForInvitee'),
      num('QuotaRemindThreshold'),
    ],
  },
];

export const ratioFields: OptionField[] = [
  json('ModelPrice'),
  json('ModelRatio'),
  json('CacheRatio'),
  json('CompletionRatio'),
  json('CreateCacheRatio'),
  json('CreateCache1hRatio'),
  shape('LongContextTiers', 'hint.longContextTiers'),
  shape('ServiceTierRatio', 'hint.serviceTierRatio'),
  shape('RequestFees', 'hint.requestFees'),
  json('GroupRatio'),
  json('UserUsableGroups'),
  json('GroupModelPrice'),
  json('GroupModelRatio'),
  json('GroupCompletionRatio'),
  json('GroupCacheRatio'),
  json('GroupCreateCacheRatio'),
  json('GroupCreateCache1hRatio'),
];

export const rateLimitFields: OptionField[] = [
  sw('ModelRequestRateLimitEnabled'),
  num('ModelRequestRateLimitDurationMinutes', { min: 0, step: 1 }),
  num('ModelRequestRateLimitCount', { min: 0, hint: 'hint.zeroUnlimited' }),
  num('ModelRequestRateLimitSuccessCount', { min: 1 }),
  json('ModelRequestRateLimitGroup'),
  { key: 'RateLimitModels', kind: 'json', hint: 'hint.rateLimitModels' },
];

const percentage = (key: string): OptionField => ({ key, kind: 'number', min: 0.1, max: 1, step: 0.1 });

export const modelSections: { id: string; fields: OptionField[] }[] = [
  {
    id: 'global',
    fields: [
      sw('global.pass_through_request_enabled'),
      sw('general_setting.ping_interval_enabled'),
      num('general_setting.ping_interval_seconds', {
        min: 1,
        enabledBy: 'general_setting.ping_interval_enabled',
      }),
    ],
  },
  {
    id: 'gemini',
    fields: [
      json('gemini.safety_settings'),
      json('gemini.version_settings'),
      json('gemini.supported_imagine_models'),
      sw('gemini.thinking_adapter_enabled'),
      percentage('gemini.thinking_adapter_budget_tokens_percentage'),
    ],
  },
  {
    id: 'claude',
    fields: [
      json('claude.model_headers_settings'),
      json('claude.default_max_tokens'),
      sw('claude.thinking_adapter_enabled'),
      percentage('claude.thinking_adapter_budget_tokens_percentage'),
    ],
  },
];

/** A datetime-local value one month before now (the default of the log-clear picker). */
export function monthAgoLocal(now = new Date()): string {
  const d = new Date(now);
  d.setMonth(d.getMonth() - 1);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}

/** Clear logs before a chosen time, after a confirmation. */
export function ClearLogs() {
  const { t } = useTranslation('settings');
  const [value, setValue] = useState(() => monthAgoLocal());
  const [error, setError] = useState<string | null>(null);
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const start = () => {
    const problem = validateLogClearTime(value);
    setError(problem ? t(problem) : null);
    if (!problem) setAsking(true);
  };
  const run = async () => {
    setBusy(true);
    try {
      const count = await clearLogsBefore(Math.floor(new Date(value).getTime() / 1000));
      toast.success(t('logs.cleared', { count }));
    } catch {
      // the request client has shown the message
    } finally {
      setBusy(false);
      setAsking(false);
    }
  };
  return (
    <div className="mt-3 flex flex-wrap items-end gap-2">
      <Input
        label={t('logs.before')}
        type="datetime-local"
        value={value}
        error={error}
        onChange={(e) => setValue(e.target.value)}
      />
      <Button variant="danger" onClick={start}>
        {t('logs.clear')}
      </Button>
      <ConfirmDialog
        open={asking}
        danger
        loading={busy}
        title={t('logs.confirm')}
        onCancel={() => setAsking(false)}
        onConfirm={() => void run()}
      />
    </div>
  );
}

export type RatioTab = 'model' | 'visual' | 'unset_models';

/** The operation tab: option sections, then the nested pricing tabs. */
export function OperationSettings({ values }: { values: OptionValues }) {
  const { t } = useTranslation('settings');
  const queryClient = useQueryClient();
  const [ratioTab, setRatioTab] = useState<RatioTab>('model');
  // Price map entries a ModelPrice resource owns, named under their JSON fields (the visual editor marks its rows).
  const owners = useQuery(optionOwnersQuery).data ?? [];
  const [confirmReset, setConfirmReset] = useState(false);
  const [resetting, setResetting] = useState(false);
  /** Resets ModelRatio to the built-in table after the admin confirmed (it cannot be undone). */
  const resetRatios = async () => {
    setResetting(true);
    try {
      await resetModelRatio();
      toast.success(t('ratio.reset'));
      await queryClient.invalidateQueries({ queryKey: ['options'] });
    } catch {
      // the request client has shown the message
    } finally {
      setResetting(false);
      setConfirmReset(false);
    }
  };
  return (
    <div className="flex flex-col gap-4">
      <ConfirmDialog
        open={confirmReset}
        danger
        loading={resetting}
        title={t('ratio.resetConfirm')}
        message={t('ratio.resetIrreversible')}
        onCancel={() => setConfirmReset(false)}
        onConfirm={() => void resetRatios()}
      />
      {operationSections.map((s) => (
        <OptionSection
          key={s.id}
          title={t(`section.${s.id}`)}
          fields={s.fields}
          values={values}
          extra={s.id === 'logs' ? () => <ClearLogs /> : undefined}
        />
      ))}
      <div
        role="tablist"
        aria-label={t('section.pricing')}
        className="flex gap-2 border-b dark:border-gray-700"
      >
        {(['model', 'visual', 'unset_models'] as const).map((id) => (
          <button
            key={id}
            type="button"
            role="tab"
            aria-selected={ratioTab === id}
            className={`px-3 py-2 text-sm ${ratioTab === id ? 'border-b-2 border-blue-600 font-medium' : ''}`}
            onClick={() => setRatioTab(id)}
          >
            {t(`ratioTab.${id}`)}
          </button>
        ))}
      </div>
      {ratioTab === 'model' ? (
        <OptionSection
          title={t('ratioTab.model')}
          fields={ratioFields}
          values={values}
          fieldNote={(f) => {
            const owned = ownedEntriesOf(owners, f.key);
            return owned.length > 0 ? <OwnedEntries optionKey={f.key} owners={owned} /> : null;
          }}
          extra={() => (
            <Button variant="secondary" onClick={() => setConfirmReset(true)}>
              {t('ratio.resetButton')}
            </Button>
          )}
        />
      ) : ratioTab === 'visual' ? (
        <PricingEditor values={values} />
      ) : (
        <UnsetModels values={values} />
      )}
    </div>
  );
}
