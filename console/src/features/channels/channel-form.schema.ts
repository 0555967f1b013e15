/**
 * The channel drawer's form in one place: its fields, a new channel's defaults, the mapping from the channel the API
 * answers and to the payload it takes, the checks, and every change the sections make (a reducer, so the drawer
 * holds one state). Messages are i18n keys of the `channels` namespace; the sections translate them.
 */
import { findProviderType, ProviderTypeId } from '@turnpike/core/providers/catalogue';
import type { LimitTexts } from '../../components/limit-fields.tsx';
import type { ChannelInput, ChannelView } from './api/channels.ts';
import {
  type ChannelSettingFields,
  isProxyUrlAllowed,
  readSettingFields,
  writeSettingField,
} from './channel-setting.ts';
import { channelLimitInput, channelLimitTexts } from './components/channel-limits-field.tsx';
import { DEFAULT_KEY_OPTIONS, type KeyOptions, keyRequestFields } from './components/key-mode-fields.tsx';
import { checkChannelForm, isJsonObjectText, normalizeBaseUrl, splitList, toInteger } from './validation.ts';

/** What the drawer edits; numbers stay text while they are typed, models and groups are lists. */
/**
 * The drawer's fields: the payload's text fields as they are, its numbers as the text typed (checked on submit),
 * the key blank on edit to keep the stored key(s).
 */
export interface ChannelForm
  extends Pick<
    ChannelInput,
    | 'name'
    | 'type'
    | 'base_url'
    | 'other'
    | 'openai_organization'
    | 'models'
    | 'groups'
    | 'model_mapping'
    | 'status_code_mapping'
    | 'setting'
    | 'param_override'
    | 'test_model'
    | 'tag'
  > {
  key: string;
  auto_ban: boolean;
  priority: string;
  weight: string;
  max_input_tokens: string;
  limits: LimitTexts;
}

/** A new channel: OpenAI with its default models in the default group. */
export function newChannelForm(): ChannelForm {
  return {
    name: '',
    type: ProviderTypeId.OpenAI,
    key: '',
    base_url: '',
    other: '',
    openai_organization: '',
    models: [...(findProviderType(ProviderTypeId.OpenAI)?.defaultModels ?? [])],
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
}

/** The form over a stored channel; its key is never shown, so the field starts blank. */
export function channelFormOf(c: ChannelView): ChannelForm {
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

/** How the form is being used, which decides what a blank key and the key options mean. */
export interface ChannelFormContext {
  readonly isEdit: boolean;
  /** The edited channel holds several keys (docs/adr/0027). */
  readonly isMultiKey: boolean;
  readonly keyOptions: KeyOptions;
}

/**
 * The payload for `POST /api/channel/` or `PUT /api/channel/`, or the message of the first problem: the form's
 * checks in the spec's order (checkChannelForm), then the limits. Text is trimmed, the base URL loses its trailing
 * slash, numbers are integers (weight and the token limit at least 0), no group means `default`.
 */
export function channelInputOf(
  form: ChannelForm,
  context: ChannelFormContext,
): { ok: true; input: ChannelInput } | { ok: false; error: string } {
  const problem = checkChannelForm(form, context.isEdit);
  if (problem) return { ok: false, error: problem };
  const limits = channelLimitInput(form.limits);
  if (!limits) return { ok: false, error: 'error.limitInteger' };
  const hasKey = form.key.trim() !== '';
  return {
    ok: true,
    input: {
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
      ...(hasKey ? { key: form.key } : {}),
      ...keyRequestFields(context.keyOptions, {
        isEdit: context.isEdit,
        isMultiKey: context.isMultiKey,
        hasKey,
      }),
    },
  };
}

/** The fields checked when they lose focus, each with the message it shows while wrong. */
export const CHECKED_FIELDS = {
  model_mapping: 'error.modelMapping',
  status_code_mapping: 'error.statusCodeMapping',
  setting: 'error.setting',
  param_override: 'error.paramOverride',
  proxy: 'error.proxy',
} as const;
export type CheckedField = keyof typeof CHECKED_FIELDS;

/** Whether a field checked on blur holds what the API takes. */
function isFieldValid(form: ChannelForm, field: CheckedField): boolean {
  if (field === 'proxy') return isProxyUrlAllowed(readSettingFields(form.setting)?.proxy ?? '');
  return isJsonObjectText(form[field]);
}

/** The drawer's one state: the form, the key options, and what it says is wrong. */
export interface ChannelFormState {
  readonly form: ChannelForm;
  readonly keyOptions: KeyOptions;
  readonly isEdit: boolean;
  /** The type the edited channel is stored with: offered even when no longer served (shown as retired). */
  readonly storedType: number | undefined;
  /** Messages under the fields that were found wrong when they lost focus. */
  readonly fieldErrors: Readonly<Partial<Record<CheckedField, string>>>;
  /** The message under the form after a refused submit; any edit clears it. */
  readonly problem: string | null;
  /** The base URL ends in /v1 and the admin is asked whether to submit it anyway. */
  readonly confirmingV1: boolean;
  readonly busy: boolean;
}

export function initialChannelFormState(
  form: ChannelForm,
  options: { isEdit: boolean; multiKeyMode?: KeyOptions['multiKeyMode'] },
): ChannelFormState {
  return {
    form,
    keyOptions: {
      ...DEFAULT_KEY_OPTIONS,
      multiKeyMode: options.multiKeyMode ?? DEFAULT_KEY_OPTIONS.multiKeyMode,
    },
    isEdit: options.isEdit,
    storedType: options.isEdit ? form.type : undefined,
    fieldErrors: {},
    problem: null,
    confirmingV1: false,
    busy: false,
  };
}

export type ChannelFormAction =
  | { readonly type: 'edit'; readonly patch: Partial<ChannelForm> }
  | { readonly type: 'changeType'; readonly value: number }
  | { readonly type: 'addModels'; readonly names: readonly string[] }
  | {
      readonly type: 'setSetting';
      readonly key: keyof ChannelSettingFields;
      readonly value: ChannelSettingFields[keyof ChannelSettingFields];
    }
  | { readonly type: 'check'; readonly field: CheckedField }
  | { readonly type: 'keyOptions'; readonly value: KeyOptions }
  | { readonly type: 'refuse'; readonly problem: string }
  | { readonly type: 'confirmV1'; readonly open: boolean }
  | { readonly type: 'busy'; readonly busy: boolean };

const withoutError = (
  errors: ChannelFormState['fieldErrors'],
  field: CheckedField,
): ChannelFormState['fieldErrors'] => {
  if (!(field in errors)) return errors;
  const next = { ...errors };
  delete next[field];
  return next;
};

export function channelFormReducer(state: ChannelFormState, action: ChannelFormAction): ChannelFormState {
  switch (action.type) {
    case 'edit':
      return { ...state, form: { ...state.form, ...action.patch }, problem: null };
    case 'changeType': {
      const { form } = state;
      const before = findProviderType(form.type)?.defaultModels ?? [];
      const untouched =
        form.models.length === 0 ||
        (form.models.length === before.length && form.models.every((m, i) => m === before[i]));
      const next = findProviderType(action.value);
      // a new channel whose models were not changed takes the new type's defaults; an edited one keeps its own
      const models = !state.isEdit && untouched && next ? [...next.defaultModels] : form.models;
      return { ...state, form: { ...form, type: action.value, models } };
    }
    case 'addModels':
      return {
        ...state,
        form: { ...state.form, models: [...new Set([...state.form.models, ...action.names])] },
        problem: null,
      };
    case 'setSetting': {
      const setting = writeSettingField(state.form.setting, action.key, action.value);
      // the fields write only over a JSON object, so the setting text is valid again
      let fieldErrors = withoutError(state.fieldErrors, 'setting');
      if (action.key === 'proxy') fieldErrors = withoutError(fieldErrors, 'proxy');
      return { ...state, form: { ...state.form, setting }, fieldErrors, problem: null };
    }
    case 'check':
      return {
        ...state,
        fieldErrors: isFieldValid(state.form, action.field)
          ? withoutError(state.fieldErrors, action.field)
          : { ...state.fieldErrors, [action.field]: CHECKED_FIELDS[action.field] },
      };
    case 'keyOptions':
      return { ...state, keyOptions: action.value };
    case 'refuse':
      return { ...state, problem: action.problem };
    case 'confirmV1':
      return { ...state, confirmingV1: action.open };
    case 'busy':
      return { ...state, busy: action.busy };
  }
}
