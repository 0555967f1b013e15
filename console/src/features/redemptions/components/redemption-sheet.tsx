import { useQuery } from '@tanstack/react-query';
import { type FormEvent, useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { CountInput, QuotaInput } from '../../../components/quota-fields.tsx';
import { FormSheet, Input } from '../../../components/ui/index.ts';
import type { QuotaDisplay } from '../../../lib/format.ts';
import { toast } from '../../../lib/toast.ts';
import { createRedemptions, fetchRedemption, updateRedemption } from '../api/redemptions.ts';
import {
  DEFAULT_REDEMPTION_QUOTA,
  parseRedemptionForm,
  REDEMPTION_COUNT_MAX,
  REDEMPTION_NAME_MAX,
  type RedemptionForm,
} from '../validation.ts';

const emptyForm: RedemptionForm = { name: '', quota: String(DEFAULT_REDEMPTION_QUOTA), count: '1' };

export interface RedemptionSheetProps {
  /** null: create; a number: edit that code. */
  id: number | null;
  display: QuotaDisplay;
  onClose: () => void;
  /** After an edit. */
  onSaved: () => void;
  /** After a create, with the name used and the generated keys. */
  onCreated: (name: string, keys: string[]) => void;
}

/** Create codes (name, quota, count with presets) or edit one code's name and quota. */
export function RedemptionSheet({ id, display, onClose, onSaved, onCreated }: RedemptionSheetProps) {
  const { t } = useTranslation('redemptions');
  const isEdit = id !== null;
  const [form, setForm] = useState<RedemptionForm>(emptyForm);
  const [errors, setErrors] = useState<Partial<Record<keyof RedemptionForm, string>>>({});
  const [saving, setSaving] = useState(false);
  const existing = useQuery({
    queryKey: ['redemption', id],
    queryFn: () => fetchRedemption(id as number),
    enabled: isEdit,
    gcTime: 0,
  });

  useEffect(() => {
    const code = existing.data;
    if (code) setForm({ name: code.name, quota: String(code.quota), count: '1' });
  }, [existing.data]);

  const set = (key: keyof RedemptionForm, value: string) => {
    setForm((f) => ({ ...f, [key]: value }));
    setErrors((e) => ({ ...e, [key]: undefined }));
  };

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const parsed = parseRedemptionForm(form, isEdit, display);
    if (!parsed.ok) {
      const message = t(parsed.error, { max: REDEMPTION_NAME_MAX, countMax: REDEMPTION_COUNT_MAX });
      setErrors({ [parsed.field]: message });
      toast.error(message);
      return;
    }
    const { name, quota, count } = parsed.value;
    setSaving(true);
    try {
      if (isEdit) {
        await updateRedemption({ id, name, quota });
        toast.success(t('saved'));
        onSaved();
      } else {
        const keys = await createRedemptions({ name, quota, count });
        toast.success(t('created', { count: keys.length }));
        onCreated(name, keys);
      }
      onClose();
    } catch {
      // the request client has shown the server's message
    } finally {
      setSaving(false);
    }
  };

  return (
    <FormSheet
      onClose={onClose}
      title={isEdit ? t('sheet.editTitle') : t('sheet.createTitle')}
      formId="redemption-form"
      onSubmit={submit}
      loading={isEdit && existing.isLoading}
      saving={saving}
      cancelLabel={t('sheet.cancel')}
      submitLabel={t('sheet.submit')}
    >
      <Input
        label={t('field.name')}
        value={form.name}
        error={errors.name}
        placeholder={isEdit ? undefined : t('field.namePlaceholder')}
        hint={t('field.nameHint', { max: REDEMPTION_NAME_MAX })}
        onChange={(e) => set('name', e.target.value)}
      />
      <QuotaInput
        label={t('field.quota')}
        value={form.quota}
        error={errors.quota}
        display={display}
        worth={(money) => t('field.quotaIs', { money })}
        onChange={(value) => set('quota', value)}
      />
      {isEdit ? null : (
        <CountInput
          label={t('field.count')}
          value={form.count}
          error={errors.count}
          hint={t('field.countHint', { max: REDEMPTION_COUNT_MAX })}
          onChange={(value) => set('count', value)}
        />
      )}
    </FormSheet>
  );
}
