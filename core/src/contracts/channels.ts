import { z } from 'zod';
import {
  type CHANNEL_JSON_FIELDS,
  checkChannelJsonField,
  joinCommaList,
  normalizeBaseUrl,
} from '../channels/channel-rules.ts';
import {
  type ChannelInfo,
  CreateMode,
  isMultiKeyMode,
  KeyMode,
  MULTI_KEY_MODES,
  type MultiKeyModeValue,
  parseChannelInfo,
} from '../channels/multi-key.ts';
import type { Channel } from '../db/schema/channels.ts';
import { ChannelStatus } from '../domain/closed-sets.ts';
import { type ResourceSource, sourceOfRow } from '../ownership/source.ts';
import { isKnownProviderType } from '../providers/catalogue.ts';
import { PAGE_SIZE_DEFAULT, PAGE_SIZE_MAX } from './envelope.ts';

export const CHANNEL_NAME_MAX = 255;
export const MODEL_NAME_MAX = 255;

const truthy = (v: unknown) => v === true || v === 'true' || v === '1' || v === 1;
const flag = z.preprocess(truthy, z.boolean()).default(false);

/** `p` counts from 1; 0 (the reference's first page) is read as 1 too. */
export const channelPageQuerySchema = z.object({
  p: z.coerce
    .number()
    .int()
    .catch(1)
    .default(1)
    .transform((p) => Math.max(p, 1)),
  page_size: z.coerce
    .number()
    .int()
    .min(1)
    .max(PAGE_SIZE_MAX)
    .catch(PAGE_SIZE_DEFAULT)
    .default(PAGE_SIZE_DEFAULT),
  id_sort: flag,
  tag_mode: flag,
});
export type ChannelPageQuery = z.infer<typeof channelPageQuerySchema>;

export const channelSearchQuerySchema = channelPageQuerySchema.extend({
  keyword: z.string().trim().max(1000).catch('').default(''),
  group: z.string().trim().max(64).catch('').default(''),
  model: z.string().trim().max(MODEL_NAME_MAX).catch('').default(''),
});
export type ChannelSearchQuery = z.infer<typeof channelSearchQuerySchema>;

/** models / group arrive as comma text or as a list; both become clean comma text. */
const commaList = (field: string) =>
  z
    .union([z.string(), z.array(z.string())], { error: `${field} must be a comma-separated list` })
    .transform((v) => joinCommaList(Array.isArray(v) ? v : [v]));

const jsonText = (field: (typeof CHANNEL_JSON_FIELDS)[number]) =>
  z
    .union([z.string(), z.null()], { error: `${field} must be JSON text` })
    .transform((v) => (v ?? '').trim())
    .superRefine((text, ctx) => {
      const problem = checkChannelJsonField(field, text);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    });

/** The largest value an `integer` column holds. */
const INT32_MAX = 2_147_483_647;

const integer = (field: string, min?: number) => {
  let n = z.coerce.number({ error: `${field} must be an integer` }).int(`${field} must be an integer`);
  if (min !== undefined) n = n.min(min, `${field} must be at least ${min}`);
  return n.max(Number.MAX_SAFE_INTEGER, `${field} is too large`);
};

const channelType = z.coerce
  .number({ error: 'type must be a provider type number' })
  .int('type must be a provider type number')
  .refine(isKnownProviderType, 'unknown channel type');

const settableStatus = z.union(
  [
    z.literal(ChannelStatus.Enabled),
    z.literal(ChannelStatus.ManuallyDisabled),
    z.literal(ChannelStatus.AutoDisabled),
  ],
  { error: 'status must be 1 (enabled), 2 (disabled) or 3 (auto-disabled)' },
);

/** The fields a channel form sends, all optional; create adds the required ones. */
const channelFields = {
  name: z.string().trim().max(CHANNEL_NAME_MAX, 'channel name is too long'),
  type: channelType,
  key: z.string(),
  base_url: z
    .string()
    .transform(normalizeBaseUrl)
    .refine((u) => u === '' || /^https?:\/\/[^\s]+$/.test(u), 'base_url must be an http or https URL'),
  other: z.string().max(10_000, 'other is too long'),
  openai_organization: z.string().trim().max(255, 'openai_organization is too long'),
  test_model: z.string().trim().max(MODEL_NAME_MAX, 'test_model is too long'),
  models: commaList('models').refine(
    (m) => m.split(',').every((name) => name.length <= MODEL_NAME_MAX),
    `a model name is longer than ${MODEL_NAME_MAX} characters`,
  ),
  group: commaList('group').refine((g) => g.length <= 255, 'too many groups'),
  groups: z.array(z.string(), { error: 'groups must be a list' }).transform((g) => joinCommaList(g)),
  auto_ban: z.coerce
    .number()
    .int()
    .pipe(z.union([z.literal(0), z.literal(1)], { error: 'auto_ban must be 0 or 1' })),
  priority: integer('priority', -999),
  weight: integer('weight')
    .max(INT32_MAX, 'weight is too large')
    .transform((w) => Math.max(w, 0)),
  max_input_tokens: integer('max_input_tokens', 0).max(INT32_MAX, 'max_input_tokens is too large'),
  // Limits of the channel (docs/adr/0028); 0 is no limit.
  rpm_limit: integer('rpm_limit', 0).max(INT32_MAX, 'rpm_limit is too large'),
  tpm_limit: integer('tpm_limit', 0).max(INT32_MAX, 'tpm_limit is too large'),
  concurrency_limit: integer('concurrency_limit', 0).max(INT32_MAX, 'concurrency_limit is too large'),
  tag: z
    .union([z.string(), z.null()])
    .transform((t) => (t ?? '').trim())
    .refine((t) => t.length <= 255, 'tag is too long'),
  status: settableStatus,
  model_mapping: jsonText('model_mapping'),
  status_code_mapping: jsonText('status_code_mapping').refine(
    (t) => t.length <= 1024,
    'status_code_mapping is too long',
  ),
  setting: jsonText('setting'),
  param_override: jsonText('param_override'),
  other_info: jsonText('other_info'),
};

const optionalFields = Object.fromEntries(
  Object.entries(channelFields).map(([k, v]) => [k, v.optional()]),
) as { [K in keyof typeof channelFields]: z.ZodOptional<(typeof channelFields)[K]> };

const multiKeyMode = z
  .string({ error: `multi_key_mode must be one of ${MULTI_KEY_MODES.join(', ')}` })
  .refine(isMultiKeyMode, `multi_key_mode must be one of ${MULTI_KEY_MODES.join(', ')}`)
  .transform((m) => m as MultiKeyModeValue);

/** The reference sends `{ mode, multi_key_mode, channel: {...} }`; Turnpike's own console sends the fields flat. */
const unwrapChannel = (body: unknown): unknown => {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  const { channel, ...rest } = body as Record<string, unknown>;
  if (typeof channel !== 'object' || channel === null || Array.isArray(channel)) return body;
  return { ...(channel as Record<string, unknown>), ...rest };
};

const blankAsUnset = (v: unknown) => (v === '' || v === null ? undefined : v);

export const createChannelSchema = z.preprocess(
  unwrapChannel,
  z
    .object({
      ...optionalFields,
      name: channelFields.name.refine((n) => n !== '', 'please fill in channel name and channel key'),
      type: channelType.default(1),
      key: z
        .string({ error: 'please fill in channel name and channel key' })
        .refine((k) => k.trim() !== '', 'please fill in channel name and channel key'),
      models: channelFields.models.refine((m) => m !== '', 'please select at least one model'),
      /** Absent: one channel per key line, as before the reference had modes. */
      mode: z.preprocess(
        blankAsUnset,
        z
          .enum([CreateMode.Single, CreateMode.Batch, CreateMode.MultiToSingle], {
            error: 'mode must be single, batch or multi_to_single',
          })
          .optional(),
      ),
      multi_key_mode: z.preprocess(blankAsUnset, multiKeyMode.optional()),
    })
    .transform(mergeGroups),
);
export type CreateChannel = z.infer<typeof createChannelSchema>;

export const updateChannelSchema = z.preprocess(
  unwrapChannel,
  z
    .object({
      ...optionalFields,
      id: integer('id', 1),
      key_mode: z.preprocess(
        blankAsUnset,
        z.enum([KeyMode.Append, KeyMode.Replace], { error: 'key_mode must be append or replace' }).optional(),
      ),
      multi_key_mode: z.preprocess(blankAsUnset, multiKeyMode.optional()),
    })
    .transform(mergeGroups)
    .refine((c) => c.models === undefined || c.models !== '', 'please select at least one model'),
);
export type UpdateChannel = z.infer<typeof updateChannelSchema>;

/** The actions of `POST /api/channel/multi_key/manage`, as the reference names them. */
export const KeyAction = {
  GetKeyStatus: 'get_key_status',
  EnableKey: 'enable_key',
  DisableKey: 'disable_key',
  DeleteKey: 'delete_key',
  EnableAllKeys: 'enable_all_keys',
  DisableAllKeys: 'disable_all_keys',
  DeleteDisabledKeys: 'delete_disabled_keys',
} as const;
export type KeyActionValue = (typeof KeyAction)[keyof typeof KeyAction];
const KEY_ACTIONS = Object.values(KeyAction) as [KeyActionValue, ...KeyActionValue[]];

export const manageKeysSchema = z
  .object({
    channel_id: integer('channel_id', 1),
    action: z.enum(KEY_ACTIONS, { error: `action must be one of ${KEY_ACTIONS.join(', ')}` }),
    key_index: integer('key_index', 0).optional(),
    page: z.coerce.number().int().min(1).catch(1).default(1),
    page_size: z.coerce.number().int().min(1).max(PAGE_SIZE_MAX).catch(50).default(50),
    /** get_key_status: only keys of this status (1, 2 or 3). */
    status: z.preprocess(blankAsUnset, z.coerce.number().int().min(1).max(3).optional()),
  })
  .refine(
    (m) =>
      ![KeyAction.EnableKey, KeyAction.DisableKey, KeyAction.DeleteKey].includes(
        m.action as 'enable_key' | 'disable_key' | 'delete_key',
      ) || m.key_index !== undefined,
    'key_index is required for this action',
  );
export type ManageKeys = z.infer<typeof manageKeysSchema>;

/** One key of a multi-key channel as the console sees it: masked, never the key. */
export interface KeyStatusView {
  index: number;
  status: number;
  disabled_reason: string;
  disabled_time: number;
  key_preview: string;
}

export interface KeyStatusPage {
  keys: KeyStatusView[];
  total: number;
  page: number;
  page_size: number;
  total_pages: number;
  enabled_count: number;
  manual_disabled_count: number;
  auto_disabled_count: number;
  multi_key_mode: MultiKeyModeValue;
}

/** `groups` (a list) wins over `group` (comma text) when both are sent. */
function mergeGroups<T extends { group?: string | undefined; groups?: string | undefined }>(c: T) {
  const { groups, ...rest } = c;
  return { ...rest, group: groups ?? c.group } as Omit<T, 'groups'>;
}

export const channelIdsSchema = z.object({
  ids: z
    .array(integer('id', 1), { error: 'select channels first' })
    .min(1, 'select channels first')
    .max(1000, 'too many channels at once'),
});

export const batchTagSchema = z.object({
  ids: channelIdsSchema.shape.ids,
  tag: z
    .string({ error: 'tag cannot be empty' })
    .trim()
    .min(1, 'tag cannot be empty')
    .max(255, 'tag is too long'),
});

export const tagSchema = z.object({
  tag: z
    .string({ error: 'tag cannot be empty' })
    .trim()
    .min(1, 'tag cannot be empty')
    .max(255, 'tag is too long'),
});

const blankIsUnset = (v: unknown) => (v === '' || v === null ? undefined : v);

/** Tag edit: every field overwrites; a blank field changes nothing; a blank `new_tag` dissolves the tag. */
export const editTagSchema = z
  .object({
    tag: tagSchema.shape.tag,
    new_tag: z
      .union([z.string(), z.null()])
      .optional()
      .transform((t) => (t === undefined ? undefined : (t ?? '').trim())),
    model_mapping: z.preprocess(blankIsUnset, jsonText('model_mapping').optional()),
    models: z.preprocess(blankIsUnset, channelFields.models.optional()),
    groups: z.preprocess(
      blankIsUnset,
      z
        .union([z.string(), z.array(z.string())])
        .transform((v) => joinCommaList(Array.isArray(v) ? v : [v]))
        .optional(),
    ),
    priority: z.preprocess(
      blankIsUnset,
      z.number({ error: 'priority must be an integer' }).int('priority must be an integer').optional(),
    ),
    weight: z.preprocess(
      blankIsUnset,
      z
        .number({ error: 'weight must be a non-negative integer' })
        .int('weight must be a non-negative integer')
        .min(0, 'weight must be a non-negative integer')
        .optional(),
    ),
  })
  .refine(
    (e) =>
      e.new_tag !== undefined ||
      e.model_mapping !== undefined ||
      (e.models !== undefined && e.models !== '') ||
      (e.groups !== undefined && e.groups !== '') ||
      e.priority !== undefined ||
      e.weight !== undefined,
    'no changes at all',
  );
export type EditTag = z.infer<typeof editTagSchema>;

export const fetchModelsSchema = z.object({
  type: channelType.default(1),
  base_url: channelFields.base_url.default(''),
  key: z.string({ error: 'please fill in the key' }).refine((k) => k.trim() !== '', 'please fill in the key'),
  /** The type's extra field, where listing needs it (Cloudflare's account id). */
  other: z.string().max(1024).default(''),
});

/** A channel as every endpoint shows it: the key is always blank. */
export interface ChannelView {
  id: number;
  type: number;
  key: '';
  name: string;
  status: number;
  base_url: string;
  other: string;
  openai_organization: string;
  test_model: string;
  models: string;
  group: string;
  weight: number;
  priority: number;
  auto_ban: number;
  max_input_tokens: number;
  rpm_limit: number;
  tpm_limit: number;
  concurrency_limit: number;
  tag: string;
  model_mapping: string;
  status_code_mapping: string;
  setting: string;
  param_override: string;
  other_info: string;
  response_time: number;
  balance: number;
  balance_updated_time: number;
  used_quota: number;
  test_time: number;
  created_time: number;
  /** The Kubernetes resource that owns this channel (read-only in the console), or null. */
  managed_by: ResourceSource | null;
  /** Multi-key state, the reference's shape (no key material). */
  channel_info: ChannelInfo;
}

export function toChannelView(c: Channel): ChannelView {
  return {
    id: c.id,
    type: c.type,
    key: '',
    name: c.name,
    status: c.status,
    base_url: c.baseUrl,
    other: c.other,
    openai_organization: c.openaiOrganization ?? '',
    test_model: c.testModel ?? '',
    models: c.models,
    group: c.group,
    weight: c.weight,
    priority: c.priority,
    auto_ban: c.autoBan,
    max_input_tokens: c.maxInputTokens,
    rpm_limit: c.rpmLimit,
    tpm_limit: c.tpmLimit,
    concurrency_limit: c.concurrencyLimit,
    tag: c.tag ?? '',
    model_mapping: c.modelMapping ?? '',
    status_code_mapping: c.statusCodeMapping ?? '',
    setting: c.setting ?? '',
    param_override: c.paramOverride ?? '',
    other_info: c.otherInfo ?? '',
    response_time: c.responseTime,
    balance: c.balance,
    balance_updated_time: c.balanceUpdatedTime,
    used_quota: c.usedQuota,
    test_time: c.testTime,
    created_time: c.createdTime,
    managed_by: sourceOfRow(c) ?? null,
    channel_info: parseChannelInfo(c.channelInfo),
  };
}

/** A tag-mode row: the tag's channels with their aggregate. */
export interface ChannelTagView {
  id: string;
  tag: string;
  name: string;
  /** Enabled when any child is enabled. */
  status: number;
  group: string;
  models: string;
  response_time: number;
  used_quota: number;
  /** Only when every child shares it. */
  priority: number | null;
  weight: number | null;
  children: ChannelView[];
}

export function toChannelTagView(tag: string, children: ChannelView[]): ChannelTagView {
  const same = (pick: (c: ChannelView) => number) =>
    children.every((c) => pick(c) === pick(children[0]!)) ? pick(children[0]!) : null;
  return {
    id: `tag:${tag}`,
    tag,
    name: tag,
    status: children.some((c) => c.status === ChannelStatus.Enabled)
      ? ChannelStatus.Enabled
      : ChannelStatus.ManuallyDisabled,
    group: joinCommaList(children.map((c) => c.group)),
    models: joinCommaList(children.map((c) => c.models)),
    response_time: Math.round(
      children.reduce((s, c) => s + c.response_time, 0) / Math.max(children.length, 1),
    ),
    used_quota: children.reduce((s, c) => s + c.used_quota, 0),
    priority: same((c) => c.priority),
    weight: same((c) => c.weight),
    children,
  };
}
