import { useQueryClient } from '@tanstack/react-query';
import { type ReactNode, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Button, ConfirmDialog, Input, Select, Switch, Textarea } from '../../../components/ui/index.ts';
import { isRoot, useSessionUser } from '../../../lib/session.ts';
import { toast } from '../../../lib/toast.ts';
import { type OptionValues, saveFailureText, saveOptions } from '../api/options.ts';
import {
  changedEntries,
  type Draft,
  fieldError,
  initialDraft,
  normalise,
  type OptionField,
} from '../option-fields.ts';

export interface OptionSectionProps {
  title: string;
  fields: readonly OptionField[];
  values: OptionValues;
  /** Extra checks on save (locale key or null); the changed entries may be adjusted by `adjust`. */
  validate?: (draft: Draft, changed: [string, string][]) => string | null;
  adjust?: (changed: [string, string][], draft: Draft) => [string, string][];
  /** Extra controls rendered under the fields (e.g. the OIDC fetch button). */
  extra?: (draft: Draft, setField: (key: string, value: string) => void) => ReactNode;
  description?: ReactNode;
  /** Shown under a field (e.g. the price map entries Kubernetes owns); null shows nothing. */
  fieldNote?: (field: OptionField) => ReactNode;
}

/**
 * One settings section: its fields, and a save button that sends only what changed (spec 01 section 5),
 * with the "nothing changed" and partial-failure messages.
 *
 * An administrator is listed only the options they may change (`optionAudience` in the core registry), so a field
 * the server did not list is hidden from them, and a section left with none is not shown. Root sees every field:
 * secrets are never listed, yet root sets them here.
 */
export function OptionSection({
  title,
  fields: allFields,
  values,
  validate,
  adjust,
  extra,
  description,
  fieldNote,
}: OptionSectionProps) {
  const { t } = useTranslation('settings');
  const queryClient = useQueryClient();
  const user = useSessionUser();
  const fields = isRoot(user) ? allFields : allFields.filter((f) => Object.hasOwn(values, f.key));
  const [draft, setDraft] = useState<Draft>(() => initialDraft(fields, values));
  const [errors, setErrors] = useState<Record<string, string | null>>({});
  const [confirming, setConfirming] = useState<OptionField | null>(null);
  const [saving, setSaving] = useState(false);

  const setField = (key: string, value: string) => setDraft((d) => ({ ...d, [key]: value }));
  /** The field's problem as shown: a locale key's text, or the words of its own check (the registry's). */
  const check = (field: OptionField) => {
    const value = draft[field.key] ?? '';
    const key = fieldError(field, value);
    const problem = key ? t(key, { min: field.min, max: field.max }) : (field.check?.(value) ?? null);
    setErrors((e) => ({ ...e, [field.key]: problem }));
    return problem;
  };

  const save = async () => {
    const problems = fields
      .filter((f) => !isDisabled(f))
      .map((f) => check(f))
      .filter(Boolean);
    if (problems.length > 0) {
      toast.error(t('save.checkInput'));
      return;
    }
    let changed = changedEntries(fields, values, draft);
    if (adjust) changed = adjust(changed, draft);
    const problem = validate?.(draft, changed) ?? null;
    if (problem) {
      toast.error(t(problem));
      return;
    }
    if (changed.length === 0) {
      toast.info(t('save.nothingChanged'));
      return;
    }
    setSaving(true);
    const result = await saveOptions(changed);
    setSaving(false);
    if (result.failed.length === 0) toast.success(t('save.saved'));
    // The server says why (a system setting, a Kubernetes-managed value, a bad value): shown after ours.
    else toast.error(saveFailureText(result, t));
    await queryClient.invalidateQueries({ queryKey: ['options'] });
    await queryClient.invalidateQueries({ queryKey: ['status'] });
  };

  const isDisabled = (f: OptionField) => Boolean(f.enabledBy && draft[f.enabledBy] !== 'true');

  const renderField = (f: OptionField) => {
    const label = t(f.label ?? `field.${f.key}`);
    const value = draft[f.key] ?? '';
    const common = {
      label,
      name: f.key,
      error: errors[f.key] ?? null,
      hint: f.hint ? t(f.hint) : undefined,
      disabled: isDisabled(f),
    };
    switch (f.kind) {
      case 'switch':
        return (
          <Switch
            key={f.key}
            label={label}
            checked={value === 'true'}
            disabled={isDisabled(f)}
            onChange={(on) => {
              if (!on && f.confirmOff) setConfirming(f);
              else setField(f.key, String(on));
            }}
          />
        );
      case 'textarea':
      case 'json':
        return (
          <Textarea
            key={f.key}
            {...common}
            value={value}
            className={f.kind === 'json' ? 'font-mono' : undefined}
            onChange={(e) => setField(f.key, e.target.value)}
            onBlur={() => check(f)}
          />
        );
      case 'select':
        return (
          <Select
            key={f.key}
            {...common}
            value={value}
            options={(f.options ?? []).map((o) => ({ value: o.value, label: t(o.label) }))}
            onChange={(e) => setField(f.key, e.target.value)}
          />
        );
      default:
        return (
          <Input
            key={f.key}
            {...common}
            type={f.kind === 'secret' ? 'password' : f.kind === 'number' ? 'number' : 'text'}
            placeholder={f.kind === 'secret' ? t('secret.placeholder') : undefined}
            autoComplete={f.kind === 'secret' ? 'new-password' : undefined}
            min={f.min}
            max={f.max}
            step={f.step}
            value={value}
            onChange={(e) => setField(f.key, e.target.value)}
            onBlur={() => check(f)}
          />
        );
    }
  };

  if (fields.length === 0) return null;
  return (
    <section
      aria-label={title}
      className="rounded-lg border border-gray-200 bg-white p-4 dark:border-gray-700 dark:bg-gray-900"
    >
      <h2 className="mb-3 text-base font-semibold">{title}</h2>
      {description ? <div className="mb-3 text-sm text-gray-500">{description}</div> : null}
      <div className="grid gap-3 md:grid-cols-2">
        {fields.map((f) => {
          const note = fieldNote?.(f);
          return note ? (
            <div key={f.key}>
              {renderField(f)}
              {note}
            </div>
          ) : (
            renderField(f)
          );
        })}
      </div>
      {extra ? <div className="mt-3">{extra(draft, setField)}</div> : null}
      <div className="mt-4">
        <Button onClick={() => void save()} loading={saving}>
          {t('save.button', { section: title })}
        </Button>
      </div>
      <ConfirmDialog
        open={confirming !== null}
        title={t(confirming?.confirmOff ?? 'save.confirm')}
        onCancel={() => setConfirming(null)}
        onConfirm={() => {
          if (confirming) setField(confirming.key, 'false');
          setConfirming(null);
        }}
      />
    </section>
  );
}

/** Re-exported so the sections can normalise values the same way. */
export { normalise };
