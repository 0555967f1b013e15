import { useQuery } from '@tanstack/react-query';
import type { ResourceSource } from '@turnpike/core/ownership/source';
import { carriedBy, findProviderType, PROVIDER_TYPES, relayingOf } from '@turnpike/core/providers/catalogue';
import { type ReactNode, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { LimitTexts } from '../../../components/limit-fields.tsx';
import {
  Button,
  ConfirmDialog,
  DialogFooter,
  Input,
  Select,
  SideSheet,
  Spinner,
  Switch,
  Tag,
  Textarea,
} from '../../../components/ui/index.ts';
import { toast } from '../../../lib/toast.ts';
import {
  type ChannelInput,
  type ChannelView,
  createChannels,
  fetchCatalogueModels,
  fetchChannel,
  fetchUpstreamModels,
  fetchUpstreamModelsOf,
  updateChannel,
} from '../api/channels.ts';
import {
  type ChannelSettingFields,
  isProxyUrlAllowed,
  readSettingFields,
  writeSettingField,
} from '../channel-setting.ts';
import {
  PROVIDERS_NS,
  providerFieldKey,
  providerKeyFormatKey,
  providerKeyPlaceholderKey,
} from '../provider-texts.ts';
import { coverageWarning } from '../relay-coverage.ts';
import {
  addCustomModels,
  checkChannelForm,
  countKeyLines,
  endsWithV1,
  isJsonObjectText,
  normalizeBaseUrl,
  relatedModels,
  splitList,
  toInteger,
  typeFormHints,
} from '../validation.ts';
import { ChannelKeysPanel } from './channel-keys-panel.tsx';
import { ChannelLimitsField, channelLimitInput, channelLimitTexts } from './channel-limits-field.tsx';
import { DEFAULT_KEY_OPTIONS, KeyModeFields, type KeyOptions, keyRequestFields } from './key-mode-fields.tsx';
import { ManagedBadge, resourceName } from './managed-badge.tsx';

/** What the drawer opens on: a new channel or an existing one. */
export type DrawerTarget = { mode: 'create' } | { mode: 'edit'; id: number };

interface FormState {
  name: string;
  type: number;
  key: string;
  base_url: string;
  other: string;
  openai_organization: string;
  models: string[];
  groups: string[];
  model_mapping: string;
  status_code_mapping: string;
  setting: string;
  param_override: string;
  auto_ban: boolean;
  test_model: string;
  tag: string;
  priority: string;
  weight: string;
  max_input_tokens: string;
  limits: LimitTexts;
}

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

/** A new channel: type 1 with its default models (changing the type of an empty list fills the new type's). */
const EMPTY: FormState = {
  name: '',
  type: 1,
  key: '',
  base_url: '',
  other: '',
  openai_organization: '',
  models: [...(findProviderType(1)?.defaultModels ?? [])],
  groups: ['default'],
  model_mapping: '',
  status_code_mapping: '',
  setting: '',
  param_override: '',
  auto_ban: true,
  test_model: '',
  tag: '',
  priority: '0',
  weight: '0',
  max_input_tokens: '0',
  limits: channelLimitTexts(),
};

function fromChannel(c: ChannelView): FormState {
  return {
    name: c.name,
    type: c.type,
    key: '',
    base_url: c.base_url,
    other: c.other,
    openai_organization: c.openai_organization,
    models: splitList(c.models),
    groups: splitList(c.group),
    model_mapping: c.model_mapping,
    status_code_mapping: c.status_code_mapping,
    setting: c.setting,
    param_override: c.param_override,
    auto_ban: c.auto_ban === 1,
    test_model: c.test_model,
    tag: c.tag,
    priority: String(c.priority),
    weight: String(c.weight),
    max_input_tokens: String(c.max_input_tokens),
    limits: channelLimitTexts(c),
  };
}

export interface ChannelDrawerProps {
  target: DrawerTarget;
  groups: string[];
  onClose: () => void;
  onSaved: () => void;
}

/** Loads the channel for edit/copy, then shows the form. */
export function ChannelDrawer(props: ChannelDrawerProps) {
  const { t } = useTranslation('channels');
  const id = props.target.mode === 'create' ? null : props.target.id;
  const channel = useQuery({
    queryKey: ['channel', id],
    queryFn: () => fetchChannel(id as number),
    enabled: id !== null,
    gcTime: 0,
  });
  const title = props.target.mode === 'edit' ? t('drawer.editTitle') : t('drawer.createTitle');
  if (id !== null && !channel.data) {
    return (
      <SideSheet open onClose={props.onClose} title={title} wide testId="channel-sheet">
        {channel.isError ? (
          <p role="alert" className="text-red-600">
            {t('error.notFound')}
          </p>
        ) : (
          <div className="flex justify-center py-10 text-blue-600">
            <Spinner />
          </div>
        )}
      </SideSheet>
    );
  }
  const managedBy = props.target.mode === 'edit' ? (channel.data?.managed_by ?? null) : null;
  return (
    <ChannelForm
      {...props}
      title={managedBy ? t('managed.viewTitle') : title}
      initial={channel.data ? fromChannel(channel.data) : EMPTY}
      editId={id}
      managedBy={managedBy}
      isMultiKey={props.target.mode === 'edit' && channel.data?.channel_info?.is_multi_key === true}
      multiKeyMode={channel.data?.channel_info?.multi_key_mode}
    />
  );
}

function Section({ title, children }: { title: string; children: ReactNode }) {
  return (
    <fieldset className="flex flex-col gap-3 border-t border-gray-200 pt-4 dark:border-gray-700">
      <legend className="pr-2 text-sm font-semibold text-gray-500">{title}</legend>
      {children}
    </fieldset>
  );
}

function ChannelForm({
  title,
  initial,
  editId,
  groups,
  onClose,
  onSaved,
  managedBy,
  isMultiKey,
  multiKeyMode,
}: ChannelDrawerProps & {
  title: string;
  initial: FormState;
  editId: number | null;
  /** Set when Kubernetes owns the channel: every field is read-only and nothing is submitted. */
  managedBy: ResourceSource | null;
  /** The channel being edited holds several keys (docs/adr/0027), picked this way. */
  isMultiKey: boolean;
  multiKeyMode: KeyOptions['multiKeyMode'] | undefined;
}) {
  const { t } = useTranslation('channels');
  const isEdit = editId !== null;
  const [form, setForm] = useState<FormState>(initial);
  const [storedType] = useState(isEdit ? initial.type : undefined);
  /** What a type carries, from the catalogue's declaration, or that it is retired. */
  const typeOption = (value: number, label: string) => {
    const kind = relayingOf(value)?.kind;
    const carries = carriedBy(value).map((c) => t(`carries.${c}`));
    const tail =
      kind === 'relayed' || kind === 'tasks' ? carries.join(t('carries.separator')) : t('type.retired');
    return { value: String(value), label: `${label} (${value}) · ${tail}` };
  };
  const [customModels, setCustomModels] = useState('');
  const [modelFilter, setModelFilter] = useState('');
  const [jsonErrors, setJsonErrors] = useState<Record<string, string>>({});
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [fetching, setFetching] = useState(false);
  const [confirmV1, setConfirmV1] = useState(false);
  const [keyOptions, setKeyOptions] = useState<KeyOptions>({
    ...DEFAULT_KEY_OPTIONS,
    multiKeyMode: multiKeyMode ?? DEFAULT_KEY_OPTIONS.multiKeyMode,
  });
  const provider = findProviderType(form.type);
  const hints = typeFormHints(form.type);
  // the catalogue's own wording is English only; its texts come from the `providers` namespace by type id
  const providerText = (key: string) => (provider ? t(key, { ns: PROVIDERS_NS }) : '');
  const declares = (field: 'other' | 'openai_organization') =>
    provider?.extraFields.some((x) => x.field === field) ?? false;
  const catalogue = useQuery({
    queryKey: ['channel-catalogue'],
    queryFn: fetchCatalogueModels,
    staleTime: 300_000,
  });
  const catalogueNames = (catalogue.data ?? []).map((m) => m.id);
  const set = <K extends keyof FormState>(key: K, value: FormState[K]) => {
    setForm((f) => ({ ...f, [key]: value }));
    setError(null);
  };
  const keyLines = countKeyLines(form.key, provider?.keyIsDocument ?? false);
  const coverage = coverageWarning(form.type, form.models);
  const typeName = provider?.label ?? String(form.type);
  const groupChoices = [...new Set([...groups, ...form.groups])];
  const filtered = form.models.filter((m) => m.toLowerCase().includes(modelFilter.toLowerCase()));

  // the setting keys the relay reads, as fields over the same JSON text; unusable while that text is not JSON
  const settingFields = readSettingFields(form.setting);
  const [proxyError, setProxyError] = useState<string | undefined>(undefined);
  const setSetting = <K extends keyof ChannelSettingFields>(key: K, value: ChannelSettingFields[K]) => {
    set('setting', writeSettingField(form.setting, key, value));
    if (key === 'proxy') setProxyError(undefined);
    // the fields write only over a JSON object, so the text is valid again
    setJsonErrors((e) => {
      const next = { ...e };
      delete next.setting;
      return next;
    });
  };
  const checkProxy = () =>
    setProxyError(isProxyUrlAllowed(settingFields?.proxy ?? '') ? undefined : t('error.proxy'));

  const checkJson = (
    field: 'model_mapping' | 'status_code_mapping' | 'setting' | 'param_override',
    msg: string,
  ) => {
    setJsonErrors((e) => {
      const next = { ...e };
      if (isJsonObjectText(form[field])) delete next[field];
      else next[field] = t(msg);
      return next;
    });
  };

  const changeType = (value: number) => {
    const next = findProviderType(value);
    setForm((f) => {
      const before = findProviderType(f.type)?.defaultModels ?? [];
      const untouched =
        f.models.length === 0 ||
        (f.models.length === before.length && f.models.every((m, i) => m === before[i]));
      return {
        ...f,
        type: value,
        // a new channel starts with the type's default models; an edited one keeps its own
        models: !isEdit && untouched && next ? [...next.defaultModels] : f.models,
      };
    });
  };

  const fillDefaults = () => {
    if (!provider) return;
    const { models } = addCustomModels(form.models, provider.defaultModels.join(','));
    set('models', models);
  };

  const fillRelated = () => {
    const { models } = addCustomModels(form.models, relatedModels(catalogueNames).join(','));
    set('models', models);
  };

  const fetchUpstream = async () => {
    if (!isEdit && !form.key.trim()) {
      toast.error(t('error.fillKey'));
      setError(t('error.fillKey'));
      return;
    }
    setFetching(true);
    try {
      const names = isEdit
        ? await fetchUpstreamModelsOf(editId)
        : await fetchUpstreamModels({
            type: form.type,
            base_url: normalizeBaseUrl(form.base_url),
            key: form.key,
            other: form.other,
          });
      set('models', [...new Set([...form.models, ...names])]);
      toast.success(t('done.fetched', { count: names.length }));
    } catch {
      // the message is shown by the request client
    } finally {
      setFetching(false);
    }
  };

  const addCustom = () => {
    const { models, duplicates } = addCustomModels(form.models, customModels);
    if (duplicates.length > 0) toast.warning(`${t('error.modelsExist')} ${duplicates.join(', ')}`);
    set('models', models);
    setCustomModels('');
  };

  const submit = async (confirmed: boolean) => {
    const problem = checkChannelForm(form, isEdit);
    if (problem) {
      setError(t(problem));
      toast.error(t(problem));
      return;
    }
    if (!confirmed && endsWithV1(form.base_url)) {
      setConfirmV1(true);
      return;
    }
    const limits = channelLimitInput(form.limits);
    if (!limits) {
      setError(t('error.limitInteger'));
      toast.error(t('error.limitInteger'));
      return;
    }
    const input: ChannelInput = {
      ...limits,
      name: form.name.trim(),
      type: form.type,
      base_url: normalizeBaseUrl(form.base_url),
      other: form.other,
      openai_organization: form.openai_organization,
      models: form.models,
      groups: form.groups.length ? form.groups : ['default'],
      model_mapping: form.model_mapping.trim(),
      status_code_mapping: form.status_code_mapping.trim(),
      setting: form.setting.trim(),
      param_override: form.param_override.trim(),
      auto_ban: form.auto_ban ? 1 : 0,
      test_model: form.test_model.trim(),
      tag: form.tag.trim(),
      priority: toInteger(form.priority, 0),
      weight: Math.max(toInteger(form.weight, 0), 0),
      max_input_tokens: Math.max(toInteger(form.max_input_tokens, 0), 0),
    };
    if (form.key.trim()) input.key = form.key;
    Object.assign(
      input,
      keyRequestFields(keyOptions, { isEdit, isMultiKey, hasKey: form.key.trim() !== '' }),
    );
    setBusy(true);
    try {
      if (isEdit) {
        await updateChannel({ ...input, id: editId });
        toast.success(t('done.updated'));
      } else {
        const created = await createChannels(input);
        toast.success(t('done.created', { count: created.length }));
      }
      onSaved();
      onClose();
    } catch {
      // shown by the request client; the drawer stays open with the input
    } finally {
      setBusy(false);
    }
  };

  return (
    <SideSheet
      open
      wide
      testId="channel-sheet"
      onClose={onClose}
      title={title}
      footer={
        managedBy ? (
          <Button variant="secondary" onClick={onClose}>
            {t('common:common.close')}
          </Button>
        ) : (
          <DialogFooter
            onCancel={onClose}
            onOk={() => void submit(false)}
            busy={busy}
            okText={t('common:common.submit')}
          />
        )
      }
    >
      {managedBy ? (
        <p role="note" className="mb-4 rounded border border-blue-200 bg-blue-50 p-3 text-sm text-blue-900">
          <ManagedBadge source={managedBy} />{' '}
          {t('managed.notice', { resource: resourceName(managedBy), generation: managedBy.generation })}
        </p>
      ) : null}
      <fieldset disabled={managedBy !== null} className="contents">
        <form
          className="flex flex-col gap-4"
          onSubmit={(e) => {
            e.preventDefault();
            void submit(false);
          }}
        >
          <Select
            label={t('field.type')}
            value={String(form.type)}
            onChange={(e) => changeType(Number(e.target.value))}
            options={offeredTypes(storedType).map((p) => typeOption(p.value, p.label))}
          />
          {coverage ? (
            <p
              role="note"
              data-testid="relay-coverage"
              className="rounded-md border border-amber-300 bg-amber-50 px-3 py-2 text-sm text-amber-800 dark:border-amber-700 dark:bg-amber-950 dark:text-amber-200"
            >
              {coverage.kind === 'notRelayed'
                ? t('coverage.notRelayed', { type: typeName })
                : coverage.kind === 'tasksOnly'
                  ? t('coverage.tasksOnly', { type: typeName, models: coverage.models.join(', ') })
                  : t('coverage.cannotCarry', {
                      type: typeName,
                      carries: t(`coverage.reach.${coverage.reach}`),
                      models: coverage.models.join(', '),
                    })}
            </p>
          ) : null}
          <Input label={t('field.name')} value={form.name} onChange={(e) => set('name', e.target.value)} />
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
            onChange={(e) => set('key', e.target.value)}
          />
          <KeyModeFields
            isEdit={isEdit}
            isMultiKey={isMultiKey}
            options={keyOptions}
            onChange={setKeyOptions}
          />
          {isMultiKey && editId !== null ? (
            <ChannelKeysPanel channelId={editId} readOnly={managedBy !== null} />
          ) : null}
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
            onChange={(e) => set('base_url', e.target.value)}
          />
          {hints.otherLabel || declares('other') ? (
            <Input
              label={
                hints.otherLabel ? t(hints.otherLabel) : providerText(providerFieldKey(form.type, 'other'))
              }
              hint={hints.otherHint ? t(hints.otherHint) : undefined}
              value={form.other}
              onChange={(e) => set('other', e.target.value)}
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
              onChange={(e) => set('openai_organization', e.target.value)}
            />
          ) : null}

          <Section title={t('field.models')}>
            <div className="flex flex-wrap gap-2">
              <Button size="sm" variant="secondary" loading={fetching} onClick={() => void fetchUpstream()}>
                {t('models.fetch')}
              </Button>
              <Button
                size="sm"
                variant="secondary"
                disabled={catalogueNames.length === 0}
                onClick={fillRelated}
              >
                {t('models.fillRelated')}
              </Button>
              <Button size="sm" variant="secondary" disabled={!provider} onClick={fillDefaults}>
                {t('models.fillDefaults')}
              </Button>
              <Button size="sm" variant="ghost" onClick={() => set('models', [])}>
                {t('models.clear')}
              </Button>
            </div>
            <Input
              label={t('models.filter')}
              value={modelFilter}
              onChange={(e) => setModelFilter(e.target.value)}
            />
            <ul aria-label={t('models.selected')} className="flex max-h-48 flex-wrap gap-1 overflow-y-auto">
              {filtered.map((m) => (
                <li key={m}>
                  <Tag color="blue">
                    {m}
                    <button
                      type="button"
                      className="ml-1"
                      aria-label={t('models.remove', { model: m })}
                      onClick={() =>
                        set(
                          'models',
                          form.models.filter((x) => x !== m),
                        )
                      }
                    >
                      ×
                    </button>
                  </Tag>
                </li>
              ))}
              {form.models.length === 0 ? (
                <li className="text-xs text-gray-500">{t('models.none')}</li>
              ) : null}
            </ul>
            <div className="flex items-end gap-2">
              <div className="flex-1">
                <Input
                  label={t('models.custom')}
                  placeholder={t('models.customPlaceholder')}
                  list="channel-catalogue-models"
                  value={customModels}
                  onChange={(e) => setCustomModels(e.target.value)}
                  onKeyDown={(e) => {
                    if (e.key === 'Enter') {
                      e.preventDefault();
                      if (customModels.trim()) addCustom();
                    }
                  }}
                />
                <datalist id="channel-catalogue-models">
                  {catalogueNames
                    .filter((m) => !form.models.includes(m))
                    .map((m) => (
                      <option key={m} value={m} />
                    ))}
                </datalist>
              </div>
              <Button variant="secondary" onClick={addCustom} disabled={!customModels.trim()}>
                {t('models.add')}
              </Button>
            </div>
          </Section>

          <Section title={t('field.groups')}>
            <div className="flex flex-wrap gap-3">
              {groupChoices.map((g) => (
                <label key={g} className="flex items-center gap-1 text-sm">
                  <input
                    type="checkbox"
                    checked={form.groups.includes(g)}
                    onChange={(e) =>
                      set(
                        'groups',
                        e.target.checked ? [...form.groups, g] : form.groups.filter((x) => x !== g),
                      )
                    }
                  />
                  {g}
                </label>
              ))}
            </div>
          </Section>

          <Section title={t('drawer.advanced')}>
            <Textarea
              label={t('field.modelMapping')}
              placeholder={t('field.modelMappingPlaceholder')}
              value={form.model_mapping}
              error={jsonErrors.model_mapping}
              onChange={(e) => set('model_mapping', e.target.value)}
              onBlur={() => checkJson('model_mapping', 'error.modelMapping')}
            />
            <Textarea
              label={t('field.statusCodeMapping')}
              placeholder={t('field.statusCodeMappingPlaceholder')}
              value={form.status_code_mapping}
              error={jsonErrors.status_code_mapping}
              onChange={(e) => set('status_code_mapping', e.target.value)}
              onBlur={() => checkJson('status_code_mapping', 'error.statusCodeMapping')}
            />
            <div className="grid grid-cols-1 gap-3 sm:grid-cols-3">
              <Input
                label={t('field.priority')}
                type="number"
                value={form.priority}
                onChange={(e) => set('priority', e.target.value)}
              />
              <Input
                label={t('field.weight')}
                type="number"
                min={0}
                value={form.weight}
                onChange={(e) => set('weight', e.target.value)}
              />
              <Input
                label={t('field.maxInputTokens')}
                type="number"
                min={0}
                value={form.max_input_tokens}
                onChange={(e) => set('max_input_tokens', e.target.value)}
              />
            </div>
            <ChannelLimitsField value={form.limits} onChange={(v) => set('limits', v)} />
            <Switch checked={form.auto_ban} onChange={(v) => set('auto_ban', v)} label={t('field.autoBan')} />
            <Input
              label={t('field.testModel')}
              value={form.test_model}
              onChange={(e) => set('test_model', e.target.value)}
            />
            <Input label={t('field.tag')} value={form.tag} onChange={(e) => set('tag', e.target.value)} />
            <Input
              label={t('field.proxy')}
              placeholder={t('field.proxyPlaceholder')}
              hint={settingFields ? t('field.proxyHint') : t('field.settingFieldsLocked')}
              value={settingFields?.proxy ?? ''}
              disabled={!settingFields}
              error={proxyError}
              autoComplete="off"
              onChange={(e) => setSetting('proxy', e.target.value)}
              onBlur={checkProxy}
            />
            <div>
              <Switch
                checked={settingFields?.force_format ?? false}
                disabled={!settingFields}
                onChange={(v) => setSetting('force_format', v)}
                label={t('field.forceFormat')}
              />
              <p className="mt-1 text-xs text-gray-500">{t('field.forceFormatHint')}</p>
            </div>
            <div>
              <Switch
                checked={settingFields?.thinking_to_content ?? false}
                disabled={!settingFields}
                onChange={(v) => setSetting('thinking_to_content', v)}
                label={t('field.thinkingToContent')}
              />
              <p className="mt-1 text-xs text-gray-500">{t('field.thinkingToContentHint')}</p>
            </div>
            <Textarea
              label={t('field.setting')}
              placeholder={t('field.settingPlaceholder')}
              value={form.setting}
              error={jsonErrors.setting}
              onChange={(e) => set('setting', e.target.value)}
              onBlur={() => checkJson('setting', 'error.setting')}
            />
            <Textarea
              label={t('field.paramOverride')}
              placeholder={t('field.paramOverridePlaceholder')}
              value={form.param_override}
              error={jsonErrors.param_override}
              onChange={(e) => set('param_override', e.target.value)}
              onBlur={() => checkJson('param_override', 'error.paramOverride')}
            />
          </Section>
          {error ? (
            <p role="alert" className="text-sm text-red-600">
              {error}
            </p>
          ) : null}
        </form>
      </fieldset>
      <ConfirmDialog
        open={confirmV1}
        title={t('drawer.v1Title')}
        message={t('field.baseUrlV1')}
        onCancel={() => setConfirmV1(false)}
        onConfirm={() => {
          setConfirmV1(false);
          void submit(true);
        }}
      />
    </SideSheet>
  );
}
