/**
 * The channel screen's rules (spec 02 sections 4, 5 and 9) as pure functions. Messages are i18n keys of the
 * `channels` namespace so the components and the tests share them.
 */

import { ProviderTypeId } from '@turnpike/core/providers/catalogue';
import { isProxyUrlAllowed, readSettingFields } from './channel-setting.ts';

export const ROW_PRIORITY_MIN = -999;
export const ROW_WEIGHT_MIN = 0;

/** Response-time colour: 0 untested; up to 1 s green, 3 s lime, 5 s yellow, beyond red. */
export type ResponseTimeColor = 'gray' | 'green' | 'lime' | 'yellow' | 'red';
export function responseTimeColor(ms: number): ResponseTimeColor {
  if (!ms || ms <= 0) return 'gray';
  if (ms <= 1000) return 'green';
  if (ms <= 3000) return 'lime';
  if (ms <= 5000) return 'yellow';
  return 'red';
}

/** Why and when the system disabled a channel, from other_info; null when it says nothing. */
export function autoDisabledInfo(otherInfo: string): { reason: string; time: number } | null {
  if (!otherInfo.trim()) return null;
  try {
    const info = JSON.parse(otherInfo) as { status_reason?: unknown; status_time?: unknown };
    const reason = typeof info.status_reason === 'string' ? info.status_reason : '';
    const time = typeof info.status_time === 'number' ? info.status_time : 0;
    return reason || time ? { reason, time } : null;
  } catch {
    return null;
  }
}

const INTEGER = /^-?\d+$/;

/**
 * An inline priority edit: blank is ignored (null); below the minimum is raised to it. Answers null when the text
 * is not an integer, so nothing is sent.
 */
export function parseRowPriority(text: string): number | null {
  const t = text.trim();
  if (!INTEGER.test(t)) return null;
  return Math.max(Number(t), ROW_PRIORITY_MIN);
}

/** An inline weight edit: blank is ignored (null); a negative weight is clamped to 0. */
export function parseRowWeight(text: string): number | null {
  const t = text.trim();
  if (!INTEGER.test(t)) return null;
  return Math.max(Number(t), ROW_WEIGHT_MIN);
}

/** A tag-level priority must be an integer. */
export function checkTagPriority(text: string): { value: number } | { error: string } {
  const t = text.trim();
  return INTEGER.test(t) ? { value: Number(t) } : { error: 'error.tagPriority' };
}

/** A tag-level weight must be a non-negative integer. */
export function checkTagWeight(text: string): { value: number } | { error: string } {
  const t = text.trim();
  return /^\d+$/.test(t) ? { value: Number(t) } : { error: 'error.tagWeight' };
}

/** Blank is fine ("not set"); otherwise it must parse as a JSON object. */
export function isJsonObjectText(text: string): boolean {
  if (!text.trim()) return true;
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null && !Array.isArray(v);
  } catch {
    return false;
  }
}

/** The fields the form rules look at beyond the JSON ones: whether the type needs its base URL filled. */
export interface TypeFormHints {
  /** Label key of the base URL field when the type names it differently (Azure endpoint, full URL, ...). */
  baseUrlLabel?: string;
  /** Hint key under the base URL field. */
  baseUrlHint?: string;
  /** The channel cannot work without a base URL of its own. */
  baseUrlRequired?: boolean;
  /** Label key of the `other` field; the field is shown only when set. */
  otherLabel?: string;
  /** Hint key under the `other` field. */
  otherHint?: string;
  /** Shows the OpenAI organization field. */
  organization?: boolean;
}

/** Type-specific fields of the drawer (spec 02 section 9); every value is a key of the `channels` namespace. */
export const TYPE_FORM_HINTS: Readonly<Record<number, TypeFormHints>> = {
  [ProviderTypeId.OpenAI]: { organization: true },
  [ProviderTypeId.Azure]: {
    baseUrlLabel: 'extra.azureEndpoint',
    baseUrlHint: 'extra.azureEndpointHint',
    baseUrlRequired: true,
    otherLabel: 'extra.apiVersion',
    otherHint: 'extra.azureVersionHint',
  },
  [ProviderTypeId.Custom]: {
    baseUrlLabel: 'extra.customUrl',
    baseUrlHint: 'extra.customUrlHint',
    baseUrlRequired: true,
  },
  [ProviderTypeId.Ali]: { otherLabel: 'extra.aliPlugin' },
  [ProviderTypeId.FastGpt]: { baseUrlHint: 'extra.fastGptHint' },
  [ProviderTypeId.Gemini]: { otherLabel: 'extra.geminiVersion' },
  [ProviderTypeId.Suno]: { baseUrlHint: 'extra.sunoHint', baseUrlRequired: true },
  [ProviderTypeId.Dify]: { baseUrlHint: 'extra.difyHint' },
  [ProviderTypeId.Cloudflare]: { otherLabel: 'extra.cloudflareAccount' },
  [ProviderTypeId.SiliconFlow]: { baseUrlHint: 'extra.siliconHint' },
  [ProviderTypeId.VertexAi]: { otherLabel: 'extra.vertexRegion', otherHint: 'extra.vertexRegionHint' },
};

export const typeFormHints = (type: number): TypeFormHints => TYPE_FORM_HINTS[type] ?? {};

/** 'Fill related models' picks the catalogue's models whose names start with these (spec 02 section 9). */
export const RELATED_MODEL_PREFIXES = ['gpt-', 'text-'] as const;
export const relatedModels = (catalogue: readonly string[]): string[] =>
  catalogue.filter((m) => RELATED_MODEL_PREFIXES.some((prefix) => m.startsWith(prefix)));

/** The model-test dialog lays the models out in a grid with columns at least this wide (px). */
export const MODEL_TEST_MIN_COLUMN = 200;

/** What GET /api/channel/test/progress answers about the current or last test of every channel. */
export interface TestAllProgress {
  running: boolean;
  done: number;
  total: number;
  failed: number;
  started_at: number;
  finished_at: number;
}

/** Whole percent done of a test run; 0 before it knows how many channels it tests. */
export const progressPercent = (p: Pick<TestAllProgress, 'done' | 'total'>): number =>
  p.total > 0 ? Math.min(100, Math.round((p.done / p.total) * 100)) : 0;

/** Base URLs that end in /v1: the relay adds the path itself, so the form warns first. */
export const endsWithV1 = (url: string): boolean => /\/v1\/*$/.test(url.trim());

/** The trailing slash is removed on submit. */
export const normalizeBaseUrl = (url: string): string => url.trim().replace(/\/+$/, '');

/** Priority and weight are parsed as integers when possible, otherwise they fall back. */
export function toInteger(text: string | number, fallback: number): number {
  const n = typeof text === 'number' ? text : Number.parseInt(String(text).trim(), 10);
  return Number.isFinite(n) ? Math.trunc(n) : fallback;
}

/** How many channels a create will make: one per non-blank key line (a JSON document is one key). */
export function countKeyLines(key: string, isDocument: boolean): number {
  if (!key.trim()) return 0;
  if (isDocument) return 1;
  return key.split('\n').filter((line) => line.trim() !== '').length;
}

export interface ChannelFormValues {
  name: string;
  type?: number;
  base_url?: string;
  key: string;
  models: string[];
  model_mapping: string;
  status_code_mapping: string;
  setting: string;
  param_override: string;
}

/**
 * The submit checks of the drawer, in the spec's order; answers the first problem's message key or null. In edit
 * mode a blank key keeps the stored one.
 */
export function checkChannelForm(values: ChannelFormValues, isEdit: boolean): string | null {
  if (!values.name.trim() || (!isEdit && !values.key.trim())) return 'error.nameAndKey';
  if (values.models.length === 0) return 'error.noModels';
  if (values.type !== undefined && typeFormHints(values.type).baseUrlRequired && !values.base_url?.trim())
    return 'error.baseUrlRequired';
  if (!isJsonObjectText(values.model_mapping)) return 'error.modelMapping';
  if (!isJsonObjectText(values.status_code_mapping)) return 'error.statusCodeMapping';
  if (!isJsonObjectText(values.setting)) return 'error.setting';
  if (!isProxyUrlAllowed(readSettingFields(values.setting)?.proxy ?? '')) return 'error.proxy';
  if (!isJsonObjectText(values.param_override)) return 'error.paramOverride';
  return null;
}

/** Adds custom model names (comma or newline separated); names already present are reported, not added twice. */
export function addCustomModels(
  current: readonly string[],
  text: string,
): { models: string[]; duplicates: string[] } {
  const wanted = text
    .split(/[,\n]/)
    .map((m) => m.trim())
    .filter(Boolean);
  const models = [...current];
  const duplicates: string[] = [];
  for (const name of wanted) {
    if (models.includes(name)) duplicates.push(name);
    else models.push(name);
  }
  return { models, duplicates };
}

export const splitList = (text: string): string[] =>
  text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

/** Tag edit: blank fields change nothing; the new tag is always sent (blank dissolves the tag). */
export function buildTagEdit(
  tag: string,
  fields: {
    newTag: string;
    modelMapping: string;
    models: string;
    groups: string;
    priority: string;
    weight: string;
  },
):
  | {
      edit: {
        tag: string;
        new_tag?: string;
        model_mapping?: string;
        models?: string;
        groups?: string;
        priority?: number;
        weight?: number;
      };
    }
  | { error: string } {
  const edit: {
    tag: string;
    new_tag?: string;
    model_mapping?: string;
    models?: string;
    groups?: string;
    priority?: number;
    weight?: number;
  } = { tag };
  if (fields.newTag.trim() !== tag) edit.new_tag = fields.newTag.trim();
  if (fields.modelMapping.trim()) {
    if (!isJsonObjectText(fields.modelMapping)) return { error: 'error.modelMapping' };
    edit.model_mapping = fields.modelMapping.trim();
  }
  if (fields.models.trim()) edit.models = splitList(fields.models).join(',');
  if (fields.groups.trim()) edit.groups = splitList(fields.groups).join(',');
  if (fields.priority.trim()) {
    const p = checkTagPriority(fields.priority);
    if ('error' in p) return p;
    edit.priority = p.value;
  }
  if (fields.weight.trim()) {
    const w = checkTagWeight(fields.weight);
    if ('error' in w) return w;
    edit.weight = w.value;
  }
  if (Object.keys(edit).length === 1) return { error: 'error.noChanges' };
  return { edit };
}

/** The table's optional columns, in display order; the column settings remember which are shown. */
export const CHANNEL_COLUMNS = [
  'id',
  'name',
  'group',
  'type',
  'status',
  'response_time',
  'balance',
  'priority',
  'weight',
] as const;
export type ChannelColumn = (typeof CHANNEL_COLUMNS)[number];
export const COLUMNS_STORAGE_KEY = 'channels-table-columns';
export const ID_SORT_STORAGE_KEY = 'id-sort';
export const TAG_MODE_STORAGE_KEY = 'tag-mode';
