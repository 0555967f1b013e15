import { CreateMode, KeyMode, MultiKeyMode } from '@turnpike/core/channels/multi-key';
import { findProviderType, PROVIDER_TYPES, ProviderTypeId } from '@turnpike/core/providers/catalogue';
import { describe, expect, it } from 'vitest';
import type { ChannelView } from './api/channels.ts';
import {
  type ChannelForm,
  type ChannelFormAction,
  type ChannelFormContext,
  channelFormOf,
  channelFormReducer,
  channelInputOf,
  initialChannelFormState,
  newChannelForm,
} from './channel-form.schema.ts';
import { DEFAULT_KEY_OPTIONS } from './components/key-mode-fields.tsx';
import { channelView } from './testing/channel-view.ts';
import { typeFormHints } from './validation.ts';

const editing: ChannelFormContext = { isEdit: true, isMultiKey: false, keyOptions: DEFAULT_KEY_OPTIONS };
const creating: ChannelFormContext = { ...editing, isEdit: false };

/** The payload, failing the test with the message when the form is refused. */
function payloadOf(form: ChannelForm, context: ChannelFormContext) {
  const result = channelInputOf(form, context);
  if (!result.ok) throw new Error(`refused: ${result.error}`);
  return result.input;
}

const problemOf = (form: ChannelForm, context: ChannelFormContext = creating) => {
  const result = channelInputOf(form, context);
  return result.ok ? null : result.error;
};

/** A channel of this type with every field set, each extra field the drawer shows for it filled. */
function storedChannel(type: number): ChannelView {
  const provider = findProviderType(type);
  const hints = typeFormHints(type);
  const shows = (field: 'other' | 'openai_organization') =>
    provider?.extraFields.some((x) => x.field === field) ?? false;
  return channelView({
    id: 7,
    name: `channel of ${type}`,
    type,
    base_url: 'https://upstream.example/api',
    other: hints.otherLabel || shows('other') ? `other-of-${type}` : '',
    openai_organization: hints.organization || shows('openai_organization') ? `org-${type}` : '',
    models: 'model-a,model-b',
    group: 'default,vip',
    model_mapping: '{"gpt-4o":"model-a"}',
    status_code_mapping: '{"429":"500"}',
    setting: '{"proxy":"socks5://p:1080","force_format":true}',
    param_override: '{"temperature":0}',
    auto_ban: 0,
    test_model: 'model-b',
    tag: 'team',
    priority: -3,
    weight: 5,
    max_input_tokens: 8000,
    rpm_limit: 60,
    tpm_limit: 100_000,
    concurrency_limit: 4,
  });
}

describe('channel form schema: from the API and back', () => {
  it.each(PROVIDER_TYPES.map((p) => [p.label, p.value] as const))(
    '%s (%i): an edited channel changed in nothing is sent back as it was stored, its extra fields included',
    (_label, type) => {
      const stored = storedChannel(type);
      const input = payloadOf(channelFormOf(stored), editing);
      expect(input).toEqual({
        name: stored.name,
        type,
        base_url: stored.base_url,
        other: stored.other,
        openai_organization: stored.openai_organization,
        models: ['model-a', 'model-b'],
        groups: ['default', 'vip'],
        model_mapping: stored.model_mapping,
        status_code_mapping: stored.status_code_mapping,
        setting: stored.setting,
        param_override: stored.param_override,
        auto_ban: 0,
        test_model: 'model-b',
        tag: 'team',
        priority: -3,
        weight: 5,
        max_input_tokens: 8000,
        rpm_limit: 60,
        tpm_limit: 100_000,
        concurrency_limit: 4,
      });
      // the stored key is never shown, so a blank key field sends none and says nothing about how keys change
      expect('key' in input || 'key_mode' in input).toBe(false);
      // and the payload stored again opens the same form
      const again = channelFormOf({
        ...stored,
        ...input,
        key: stored.key,
        models: input.models.join(','),
        group: input.groups.join(','),
      });
      expect(again).toEqual(channelFormOf(stored));
    },
  );

  it('fills the extra fields the type declares: Azure API version, Vertex AI region, OpenAI organization', () => {
    expect(storedChannel(ProviderTypeId.Azure).other).toBe('other-of-3');
    expect(storedChannel(ProviderTypeId.VertexAi).other).toBe('other-of-41');
    expect(storedChannel(ProviderTypeId.OpenAI).openai_organization).toBe('org-1');
    expect(storedChannel(ProviderTypeId.Anthropic)).toMatchObject({ other: '', openai_organization: '' });
  });

  it('starts a new channel as OpenAI with its default models in the default group, automatic disabling on', () => {
    const form = newChannelForm();
    expect(form).toMatchObject({ type: ProviderTypeId.OpenAI, groups: ['default'], auto_ban: true });
    expect(form.models).toEqual(findProviderType(ProviderTypeId.OpenAI)?.defaultModels);
    const input = payloadOf({ ...form, name: ' main ', key: 'sk-1\nsk-2' }, creating);
    expect(input).toMatchObject({
      name: 'main',
      key: 'sk-1\nsk-2',
      mode: CreateMode.Batch,
      auto_ban: 1,
      priority: 0,
      weight: 0,
      max_input_tokens: 0,
      rpm_limit: 0,
      tpm_limit: 0,
      concurrency_limit: 0,
    });
    expect('multi_key_mode' in input).toBe(false);
  });

  it('trims text, strips the trailing slash, sends integers (weight and input tokens at least 0) and the default group', () => {
    const form: ChannelForm = {
      ...newChannelForm(),
      name: 'n',
      key: 'sk',
      base_url: ' https://up.example/v1// ',
      groups: [],
      model_mapping: '  {"a":"b"}  ',
      tag: ' t ',
      test_model: ' m ',
      priority: '12abc',
      weight: '-4',
      max_input_tokens: 'lots',
    };
    expect(payloadOf(form, creating)).toMatchObject({
      base_url: 'https://up.example/v1',
      groups: ['default'],
      model_mapping: '{"a":"b"}',
      tag: 't',
      test_model: 'm',
      priority: 12,
      weight: 0,
      max_input_tokens: 0,
    });
  });

  it('sends how keys are read: one multi-key channel on create; add or replace, and the selection, on edit', () => {
    const form = { ...newChannelForm(), name: 'n', key: 'sk-1\nsk-2' };
    const multi = {
      mode: CreateMode.MultiToSingle,
      multiKeyMode: MultiKeyMode.Polling,
      keyMode: KeyMode.Append,
    };
    expect(payloadOf(form, { ...creating, keyOptions: multi })).toMatchObject({
      mode: 'multi_to_single',
      multi_key_mode: 'polling',
    });
    const replace = { ...DEFAULT_KEY_OPTIONS, keyMode: KeyMode.Replace };
    expect(payloadOf(form, { ...editing, isMultiKey: true, keyOptions: replace })).toMatchObject({
      key: 'sk-1\nsk-2',
      key_mode: 'replace',
      multi_key_mode: 'random',
    });
    const blankKey = payloadOf({ ...form, key: '  ' }, { ...editing, isMultiKey: true, keyOptions: replace });
    expect(blankKey).toMatchObject({ multi_key_mode: 'random' });
    expect('key' in blankKey || 'key_mode' in blankKey).toBe(false);
  });
});

describe('channel form schema: what it refuses', () => {
  const ok: ChannelForm = { ...newChannelForm(), name: 'n', key: 'sk-1' };

  it('answers the first problem in the spec order, as a message of the channels namespace', () => {
    expect(problemOf({ ...ok, name: ' ' })).toBe('error.nameAndKey');
    expect(problemOf({ ...ok, key: '' })).toBe('error.nameAndKey');
    expect(problemOf({ ...ok, key: '' }, editing)).toBeNull();
    expect(problemOf({ ...ok, models: [] })).toBe('error.noModels');
    expect(problemOf({ ...ok, type: ProviderTypeId.Azure })).toBe('error.baseUrlRequired');
    expect(problemOf({ ...ok, type: ProviderTypeId.Custom, base_url: ' ' })).toBe('error.baseUrlRequired');
    expect(problemOf({ ...ok, model_mapping: '{"a":' })).toBe('error.modelMapping');
    expect(problemOf({ ...ok, status_code_mapping: '[1]' })).toBe('error.statusCodeMapping');
    expect(problemOf({ ...ok, setting: 'proxy' })).toBe('error.setting');
    expect(problemOf({ ...ok, setting: '{"proxy":"ftp://p"}' })).toBe('error.proxy');
    expect(problemOf({ ...ok, param_override: '"x"' })).toBe('error.paramOverride');
    expect(problemOf({ ...ok, limits: { rpm: '1.5', tpm: '', concurrency: '' } })).toBe('error.limitInteger');
    expect(problemOf({ ...ok, limits: { rpm: '', tpm: '', concurrency: '-1' } })).toBe('error.limitInteger');
    // a name and models missing together: the name is named first
    expect(problemOf({ ...ok, name: '', models: [] })).toBe('error.nameAndKey');
  });
});

describe('channel form state', () => {
  const run = (state: ReturnType<typeof initialChannelFormState>, ...actions: ChannelFormAction[]) =>
    actions.reduce(channelFormReducer, state);
  const fresh = () => initialChannelFormState(newChannelForm(), { isEdit: false });

  it("gives a new channel the new type's default models until its list is changed; an edited channel keeps its own", () => {
    const anthropic = findProviderType(ProviderTypeId.Anthropic)?.defaultModels;
    expect(run(fresh(), { type: 'changeType', value: ProviderTypeId.Anthropic }).form.models).toEqual(
      anthropic,
    );
    const custom = run(fresh(), { type: 'addModels', names: ['mine'] }, { type: 'changeType', value: 14 });
    expect(custom.form.models).toContain('mine');
    expect(custom.form.type).toBe(14);
    const edited = initialChannelFormState(channelFormOf(storedChannel(1)), { isEdit: true });
    expect(run(edited, { type: 'changeType', value: 14 }).form.models).toEqual(['model-a', 'model-b']);
    expect(edited.storedType).toBe(1);
  });

  it('marks a JSON field or the proxy wrong when it loses focus, and clears the mark once it is right', () => {
    let state = run(
      fresh(),
      { type: 'edit', patch: { status_code_mapping: '{' } },
      { type: 'check', field: 'status_code_mapping' },
    );
    expect(state.fieldErrors).toEqual({ status_code_mapping: 'error.statusCodeMapping' });
    state = run(
      state,
      { type: 'edit', patch: { status_code_mapping: '{}' } },
      { type: 'check', field: 'status_code_mapping' },
    );
    expect(state.fieldErrors).toEqual({});
    state = run(
      state,
      { type: 'setSetting', key: 'proxy', value: 'ftp://p' },
      { type: 'check', field: 'proxy' },
    );
    expect(state.fieldErrors).toEqual({ proxy: 'error.proxy' });
    // typing in the proxy field clears its mark until it loses focus again
    state = run(state, { type: 'setSetting', key: 'proxy', value: 'http://p:3128' });
    expect(state.fieldErrors).toEqual({});
  });

  it('writes the setting fields into the setting JSON, which makes a wrong setting text right again', () => {
    let state = run(fresh(), { type: 'edit', patch: { setting: '{"headers":{"X":"1"}}' } });
    state = run(state, { type: 'setSetting', key: 'thinking_to_content', value: true });
    expect(JSON.parse(state.form.setting)).toEqual({ headers: { X: '1' }, thinking_to_content: true });
    state = run(state, { type: 'edit', patch: { setting: '' } }, { type: 'check', field: 'setting' });
    expect(state.fieldErrors).toEqual({});
    state = run(state, { type: 'edit', patch: { setting: '[' } }, { type: 'check', field: 'setting' });
    expect(state.fieldErrors).toEqual({ setting: 'error.setting' });
  });

  it('forgets a refused submit on the next edit, not on a change of key options', () => {
    let state = run(fresh(), { type: 'refuse', problem: 'error.nameAndKey' });
    state = run(state, { type: 'keyOptions', value: { ...DEFAULT_KEY_OPTIONS, mode: CreateMode.Single } });
    expect(state.problem).toBe('error.nameAndKey');
    expect(state.keyOptions.mode).toBe('single');
    expect(run(state, { type: 'edit', patch: { name: 'x' } }).problem).toBeNull();
  });

  it('merges fetched models without duplicates', () => {
    const state = run(
      fresh(),
      { type: 'edit', patch: { models: ['a', 'b'] } },
      { type: 'addModels', names: ['b', 'c'] },
    );
    expect(state.form.models).toEqual(['a', 'b', 'c']);
  });
});
