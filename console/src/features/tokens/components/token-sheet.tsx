import { useQuery } from '@tanstack/react-query';
import { type FormEvent, useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { LimitFields, limitTextsOf } from '../../../components/limit-fields.tsx';
import { CountInput, QuotaInput } from '../../../components/quota-fields.tsx';
import { FormSheet, Input, PresetInput, Select, Switch, Textarea } from '../../../components/ui/index.ts';
import { useQuotaDisplay } from '../../../lib/status.ts';
import { toast } from '../../../lib/toast.ts';
import { useQuotaWindowsField } from '../../quota-windows/components/window-editor.tsx';
import { createToken, fetchToken, fetchUserGroups, fetchUserModels, updateToken } from '../api/tokens.ts';
import {
  BATCH_NAME_MAX,
  batchNames,
  DEFAULT_TOKEN_QUOTA,
  EXPIRY_PRESETS,
  type ExpiryPreset,
  expiryText,
  parseTokenForm,
  presetExpiry,
  TOKEN_ERROR_KEYS,
  TOKEN_NAME_MAX,
  type TokenForm,
} from '../validation.ts';

const limitErrorsCleared = {
  'limits.rpm': undefined,
  'limits.tpm': undefined,
  'limits.concurrency': undefined,
};

const emptyForm: TokenForm = {
  name: '',
  remainQuota: String(DEFAULT_TOKEN_QUOTA),
  unlimitedQuota: false,
  expiry: '',
  count: '1',
  modelLimitsEnabled: false,
  modelLimits: [],
  allowIps: '',
  group: '',
  limits: limitTextsOf(undefined),
};

export interface TokenSheetProps {
  /** null: create; a number: edit that token. */
  id: number | null;
  onClose: () => void;
  onSaved: () => void;
}

/** Create or edit a token: quota and expiry presets, batch count, model limits, IP allow-list and group. */
export function TokenSheet({ id, onClose, onSaved }: TokenSheetProps) {
  const { t } = useTranslation('tokens');
  const isEdit = id !== null;
  const display = useQuotaDisplay();
  const [form, setForm] = useState<TokenForm>(emptyForm);
  const [errors, setErrors] = useState<Partial<Record<string, string>>>({});
  const [saving, setSaving] = useState(false);
  const existing = useQuery({
    queryKey: ['token', id],
    queryFn: () => fetchToken(id as number),
    enabled: isEdit,
    gcTime: 0,
  });
  const models = useQuery({ queryKey: ['user-models'], queryFn: fetchUserModels });
  const groups = useQuery({ queryKey: ['user-groups'], queryFn: fetchUserGroups });

  useEffect(() => {
    const token = existing.data;
    if (!token) return;
    setForm({
      name: token.name,
      remainQuota: String(token.remain_quota),
      unlimitedQuota: token.unlimited_quota,
      expiry: expiryText(token.expired_time),
      count: '1',
      modelLimitsEnabled: token.model_limits_enabled,
      modelLimits: token.model_limits ? token.model_limits.split(',').filter(Boolean) : [],
      allowIps: token.allow_ips,
      group: token.group,
      limits: limitTextsOf({
        rpm: token.rpm_limit,
        tpm: token.tpm_limit,
        concurrency: token.concurrency_limit,
      }),
    });
  }, [existing.data]);

  const windows = useQuotaWindowsField(
    existing.data?.quota_windows,
    existing.data?.quota_window_states,
    display,
  );

  const set = <K extends keyof TokenForm>(key: K, value: TokenForm[K]) => {
    setForm((f) => ({ ...f, [key]: value }));
    setErrors((e) => ({ ...e, [key]: undefined, ...(key === 'limits' ? limitErrorsCleared : {}) }));
  };

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const parsed = parseTokenForm(form, isEdit);
    if (!parsed.ok) {
      const message = t(TOKEN_ERROR_KEYS[parsed.error], { max: BATCH_NAME_MAX });
      setErrors({ [parsed.field]: message });
      toast.error(message);
      return;
    }
    const budget = windows.check();
    if (!budget.ok) {
      toast.error(budget.message);
      return;
    }
    setSaving(true);
    try {
      const fields = {
        ...parsed.value.fields,
        ...(!isEdit || budget.changed ? { quota_windows: budget.windows } : {}),
      };
      const { count } = parsed.value;
      if (isEdit) {
        await updateToken({ ...fields, id });
        toast.success(t('saved'));
      } else {
        let created = 0;
        try {
          for (const name of batchNames(fields.name, count)) {
            await createToken({ ...fields, name });
            created++;
          }
        } catch (error) {
          // a batch that failed half-way still shows the tokens it made
          if (created > 0) onSaved();
          throw error;
        }
        toast.success(count > 1 ? t('createdMany', { count: created }) : t('created'));
      }
      onSaved();
      onClose();
    } catch {
      // the request client has shown the server's message
    } finally {
      setSaving(false);
    }
  };

  const modelOptions = Array.from(new Set([...(models.data ?? []), ...form.modelLimits]));
  const groupEntries = Object.entries(groups.data ?? {});

  return (
    <FormSheet
      onClose={onClose}
      title={isEdit ? t('sheet.editTitle') : t('sheet.createTitle')}
      formId="token-form"
      onSubmit={submit}
      loading={isEdit && existing.isLoading}
      saving={saving}
      cancelLabel={t('sheet.cancel')}
      submitLabel={t('sheet.submit')}
    >
      <Input
        label={t('field.name')}
        value={form.name}
        maxLength={TOKEN_NAME_MAX}
        error={errors.name}
        placeholder={t('field.namePlaceholder')}
        onChange={(e) => set('name', e.target.value)}
      />
      <PresetInput
        label={t('field.expiry')}
        value={form.expiry}
        error={errors.expiry}
        placeholder={t('field.expiryPlaceholder')}
        hint={form.expiry.trim() ? undefined : t('field.expiryNever')}
        onChange={(e) => set('expiry', e.target.value)}
        presets={(Object.keys(EXPIRY_PRESETS) as ExpiryPreset[]).map((preset) => ({
          value: preset,
          label: t(`expiry.${preset}`),
        }))}
        onPick={(preset) => set('expiry', presetExpiry(preset as ExpiryPreset))}
      />
      <p className="rounded bg-yellow-50 p-2 text-xs text-yellow-800 dark:bg-yellow-900/30 dark:text-yellow-200">
        {t('field.quotaNote')}
      </p>
      <Switch
        checked={form.unlimitedQuota}
        onChange={(v) => set('unlimitedQuota', v)}
        label={t('field.unlimited')}
      />
      {form.unlimitedQuota ? null : (
        <QuotaInput
          label={t('field.quota')}
          value={form.remainQuota}
          error={errors.remainQuota}
          display={display}
          worth={(money) => t('field.quotaIs', { money })}
          onChange={(value) => set('remainQuota', value)}
        />
      )}
      {isEdit ? null : (
        <CountInput
          label={t('field.count')}
          value={form.count}
          error={errors.count}
          hint={t('field.countHint')}
          onChange={(value) => set('count', value)}
        />
      )}
      <Switch
        checked={form.modelLimitsEnabled}
        onChange={(v) => set('modelLimitsEnabled', v)}
        label={t('field.modelLimitsEnabled')}
      />
      {form.modelLimitsEnabled ? (
        <fieldset className="flex flex-col gap-1">
          <legend className="text-sm font-medium">{t('field.modelLimits')}</legend>
          {modelOptions.length === 0 ? (
            <p className="text-xs text-gray-500">{t('field.noModels')}</p>
          ) : (
            <div className="grid max-h-48 grid-cols-1 gap-1 overflow-y-auto rounded border border-gray-200 p-2 sm:grid-cols-2 dark:border-gray-700">
              {modelOptions.map((model) => (
                <label key={model} className="flex items-center gap-2 text-sm">
                  <input
                    type="checkbox"
                    checked={form.modelLimits.includes(model)}
                    onChange={(e) =>
                      set(
                        'modelLimits',
                        e.target.checked
                          ? [...form.modelLimits, model]
                          : form.modelLimits.filter((m) => m !== model),
                      )
                    }
                  />
                  <span className="break-all">{model}</span>
                </label>
              ))}
            </div>
          )}
        </fieldset>
      ) : null}
      <Textarea
        label={t('field.allowIps')}
        value={form.allowIps}
        placeholder={t('field.allowIpsPlaceholder')}
        hint={t('field.allowIpsHint')}
        onChange={(e) => set('allowIps', e.target.value)}
      />
      <LimitFields
        name="token-limit"
        value={form.limits}
        onChange={(limits) => set('limits', limits)}
        labels={{
          rpm: t('field.rpmLimit'),
          tpm: t('field.tpmLimit'),
          concurrency: t('field.concurrencyLimit'),
        }}
        errors={{
          rpm: errors['limits.rpm'],
          tpm: errors['limits.tpm'],
          concurrency: errors['limits.concurrency'],
        }}
        hint={t('field.limitsHint')}
      />
      {windows.editor}
      <Select
        label={t('field.group')}
        value={form.group}
        onChange={(e) => set('group', e.target.value)}
        options={[
          { value: '', label: t('field.groupDefault') },
          ...groupEntries.map(([name, g]) => ({
            value: name,
            label: g.desc ? `${name} · ${g.desc} (${g.ratio}x)` : `${name} (${g.ratio}x)`,
          })),
          ...(form.group && !groupEntries.some(([name]) => name === form.group)
            ? [{ value: form.group, label: form.group }]
            : []),
        ]}
      />
    </FormSheet>
  );
}
