import { ChannelStatus } from '../domain/closed-sets.ts';
import { isRecord } from '../json.ts';
import { ProviderTypeId } from '../providers/catalogue.ts';
import { splitKeyInput } from './multi-key.ts';

/**
 * The credentials a key field holds: one per non-blank line, except for types whose key is one JSON document
 * (Vertex AI service accounts): one document, or each item of a JSON array of documents.
 */
export const splitChannelKeys = (type: number, key: string): string[] => splitKeyInput(type, key);

/** Splits a comma list, trims, drops blanks and duplicates, keeps the first order. */
export function splitCommaList(text: string): string[] {
  return [
    ...new Set(
      text
        .split(',')
        .map((part) => part.trim())
        .filter(Boolean),
    ),
  ];
}

export const joinCommaList = (items: readonly string[]): string => splitCommaList(items.join(',')).join(',');

/** The JSON text fields of a channel and what shape each must have. */
export const CHANNEL_JSON_FIELDS = [
  'model_mapping',
  'status_code_mapping',
  'setting',
  'param_override',
  'other_info',
] as const;
export type ChannelJsonField = (typeof CHANNEL_JSON_FIELDS)[number];

/**
 * Checks one JSON text field; answers a message for people, or undefined when it is fine. Blank text means
 * "not set" and is always accepted.
 */
export function checkChannelJsonField(field: ChannelJsonField, text: string): string | undefined {
  if (text.trim() === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return `${field} must be valid JSON`;
  }
  if (!isRecord(value)) return `${field} must be a JSON object`;
  switch (field) {
    case 'model_mapping':
      for (const [from, to] of Object.entries(value))
        if (typeof to !== 'string' || from.trim() === '' || to.trim() === '')
          return 'model_mapping must map model names to model names';
      return undefined;
    case 'status_code_mapping':
      for (const [from, to] of Object.entries(value)) {
        const target = typeof to === 'number' ? String(to) : to;
        if (!/^[1-5]\d\d$/.test(from) || typeof target !== 'string' || !/^[1-5]\d\d$/.test(target))
          return 'status_code_mapping must map HTTP status codes to HTTP status codes';
      }
      return undefined;
    case 'setting': {
      for (const flag of ['force_format', 'thinking_to_content'] as const)
        if (flag in value && typeof value[flag] !== 'boolean') return `setting.${flag} must be true or false`;
      if ('proxy' in value && value.proxy !== '') {
        const proxy = value.proxy;
        if (typeof proxy !== 'string' || !isProxyUrl(proxy))
          return 'setting.proxy must be an http, https or socks5 URL';
      }
      return undefined;
    }
    case 'other_info':
      if ('status_time' in value && typeof value.status_time !== 'number')
        return 'other_info.status_time must be a number';
      if ('status_reason' in value && typeof value.status_reason !== 'string')
        return 'other_info.status_reason must be text';
      return undefined;
    case 'param_override':
      return undefined;
  }
}

function isProxyUrl(text: string): boolean {
  try {
    return ['http:', 'https:', 'socks5:'].includes(new URL(text).protocol);
  } catch {
    return false;
  }
}

/** The type-specific rule on `other`: Vertex AI needs a region or a JSON map with a `default` region. */
export function checkChannelOther(type: number, other: string): string | undefined {
  if (type !== ProviderTypeId.VertexAi) return undefined;
  const text = other.trim();
  if (text === '') return 'Vertex AI needs a region in other';
  if (!text.startsWith('{')) return undefined;
  try {
    const map: unknown = JSON.parse(text);
    if (isRecord(map) && typeof map.default === 'string' && map.default !== '') return undefined;
  } catch {}
  return 'the Vertex AI region map must be a JSON object with a default region';
}

/** What the abilities index needs from a channel. */
export interface AbilitySource {
  readonly id: number;
  readonly group: string;
  readonly models: string;
  readonly status: number;
  readonly priority: number;
  readonly weight: number;
  readonly tag: string | null;
}

export interface AbilityRow {
  group: string;
  model: string;
  channelId: number;
  enabled: boolean;
  priority: number;
  weight: number;
  tag: string | null;
}

/** One routing row per group × model of the channel; only an enabled channel's rows are enabled. */
export function computeAbilities(channel: AbilitySource): AbilityRow[] {
  const groups = splitCommaList(channel.group);
  const models = splitCommaList(channel.models);
  const rows: AbilityRow[] = [];
  for (const group of groups)
    for (const model of models)
      rows.push({
        group,
        model,
        channelId: channel.id,
        enabled: channel.status === ChannelStatus.Enabled,
        priority: channel.priority,
        weight: channel.weight,
        tag: channel.tag,
      });
  return rows;
}

/** The console's rules on a base URL: trimmed, without a trailing slash. */
export const normalizeBaseUrl = (url: string): string => url.trim().replace(/\/+$/, '');
