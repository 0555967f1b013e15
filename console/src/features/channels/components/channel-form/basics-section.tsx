/** Type, name, key (with how its lines are read) and address: what a channel is and how it reaches its upstream. */
import {
  type Carried,
  carriedBy,
  findProviderType,
  PROVIDER_TYPES,
  relayingOf,
} from '@turnpike/core/providers/catalogue';
import { useTranslation } from 'react-i18next';
import { Input, Select, Textarea } from '../../../../components/ui/index.ts';
import {
  PROVIDERS_NS,
  providerFieldKey,
  providerKeyFormatKey,
  providerKeyPlaceholderKey,
} from '../../provider-texts.ts';
import { coverageWarning } from '../../relay-coverage.ts';
import { countKeyLines, endsWithV1, typeFormHints } from '../../validation.ts';
import { ChannelKeysPanel } from '../channel-keys-panel.tsx';
import { KeyModeFields } from '../key-mode-fields.tsx';
import { editOf, Section, type SectionProps } from './section.tsx';

/**
 * The types a channel can be given: those the relay serves (and the task types), and the type the edited row
 * already has even when the relay no longer serves it (PaLM 2), which is shown as retired.
 */
function offeredTypes(storedType: number | undefined) {
  return PROVIDER_TYPES.filter((p) => {
    const kind = relayingOf(p.value)?.kind;
    return kind === 'relayed' || kind === 'tasks' || p.value === storedType;
  });
}

export function BasicsSection({
  state,
  dispatch,
  editId,
  isMultiKey,
  readOnly,
}: SectionProps & {
  /** The channel being edited, null for a new one. */
  editId: number | null;
  isMultiKey: boolean;
  readOnly: boolean;
}) {
  const { t } = useTranslation('channels');
  const { form, isEdit, keyOptions } = state;
  const edit = editOf(dispatch);
  const provider = findProviderType(form.type);
  const hints = typeFormHints(form.type);
  // the catalogue's own wording is English only; its texts come from the `providers` namespace by type id
  const providerText = (key: string) => (provider ? t(key, { ns: PROVIDERS_NS }) : '');
  const declares = (field: 'other' | 'openai_organization') =>
    provider?.extraFields.some((x) => x.field === field) ?? false;
  /** What a type carries, in words, from the catalogue's declaration. */
  const carriesText = (carries: readonly Carried[]) =>
    carries.map((c) => t(`carries.${c}`)).join(t('carries.separator'));
  /** A type with what it carries, or that it is retired. */
  const typeOption = (value: number, label: string) => {
    const kind = relayingOf(value)?.kind;
    const tail = kind === 'relayed' || kind === 'tasks' ? carriesText(carriedBy(value)) : t('type.retired');
    return { value: String(value), label: `${label} (${value}) · ${tail}` };
  };
  const keyLines = countKeyLines(form.key, provider?.keyIsDocument ?? false);
  const coverage = coverageWarning(form.type, form.models);
  const typeName = provider?.label ?? String(form.type);

  return (
    <Section title={t('drawer.basics')}>
      <Select
        label={t('field.type')}
        value={String(form.type)}
        onChange={(e) => dispatch({ type: 'changeType', value: Number(e.target.value) })}
        options={offeredTypes(state.storedType).map((p) => typeOption(p.value, p.label))}
      />
      {coverage ? (
        <p
          role="note"
          data-testid="relay-coverage"
          className="rounded-md border border-amber-300 bg-amber-50 px-3 py-2 text-sm text-amber-800 dark:border-amber-700 dark:bg-amber-950 dark:text-amber-200"
        >
          {coverage.kind === 'notRelayed'
            ? t('coverage.notRelayed', { type: typeName })
            : t('coverage.cannotCarry', {
                type: typeName,
                carries: carriesText(coverage.carries),
                models: coverage.models.join(', '),
              })}
        </p>
      ) : null}
      <Input label={t('field.name')} value={form.name} onChange={(e) => edit({ name: e.target.value })} />
      <Textarea
        label={t('field.key')}
        value={form.key}
        autoComplete="off"
        placeholder={isEdit ? t('field.keyKeep') : providerText(providerKeyPlaceholderKey(form.type))}
        hint={
          <>
            {t('field.keyFormat', { format: providerText(providerKeyFormatKey(form.type)) })}
            {!isEdit && keyLines > 1 && keyOptions.mode === 'batch' ? (
              <strong className="ml-1">{t('field.keyBatch', { count: keyLines })}</strong>
            ) : null}
          </>
        }
        onChange={(e) => edit({ key: e.target.value })}
      />
      <KeyModeFields
        isEdit={isEdit}
        isMultiKey={isMultiKey}
        options={keyOptions}
        onChange={(value) => dispatch({ type: 'keyOptions', value })}
      />
      {isMultiKey && editId !== null ? <ChannelKeysPanel channelId={editId} readOnly={readOnly} /> : null}
      <Input
        label={hints.baseUrlLabel ? t(hints.baseUrlLabel) : t('field.baseUrl')}
        value={form.base_url}
        required={hints.baseUrlRequired}
        placeholder={provider?.defaultBaseUrl || t('field.baseUrlPlaceholder')}
        hint={
          endsWithV1(form.base_url)
            ? t('field.baseUrlV1')
            : hints.baseUrlHint
              ? t(hints.baseUrlHint)
              : t('field.baseUrlHint')
        }
        onChange={(e) => edit({ base_url: e.target.value })}
      />
      {hints.otherLabel || declares('other') ? (
        <Input
          label={hints.otherLabel ? t(hints.otherLabel) : providerText(providerFieldKey(form.type, 'other'))}
          hint={hints.otherHint ? t(hints.otherHint) : undefined}
          value={form.other}
          onChange={(e) => edit({ other: e.target.value })}
        />
      ) : null}
      {hints.organization || declares('openai_organization') ? (
        <Input
          label={
            hints.organization
              ? t('extra.organization')
              : providerText(providerFieldKey(form.type, 'openai_organization'))
          }
          hint={t('extra.organizationHint')}
          value={form.openai_organization}
          onChange={(e) => edit({ openai_organization: e.target.value })}
        />
      ) : null}
    </Section>
  );
}
