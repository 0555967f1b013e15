/**
 * Channels of new-api and one-api as Turnpike channel rows. A new-api multi-key channel stays one multi-key channel
 * (docs/adr/0027): its keys, each key's status, reason and time, and its selection mode come over in
 * `channel_info`, which Turnpike stores in the reference's shape. Rows an earlier import made for further keys
 * (one row per key, before multi-key channels) carry an `imported_from` marker in `other_info`, still honoured so a
 * re-run duplicates nothing.
 */
import { ringStatusPatch } from '../channels/key-ring-writes.ts';
import {
  infoOfRing,
  isMultiKeyMode,
  joinKeys,
  MultiKeyMode,
  parseChannelInfo,
  ringOf,
} from '../channels/multi-key.ts';
import type { NewChannel } from '../db/schema/index.ts';
import { findProviderType } from '../providers/catalogue.ts';
import type { SourceRow } from './source.ts';
import { toInt, toJson, toNullableText, toNumber, toText } from './values.ts';

/** A channel row to write, with its key in plain text (sealed on write). */
export interface ImportedChannel {
  readonly sourceId: number;
  /** Always 0 now: the row keeps the source id (n > 0 marked further-key rows of earlier imports). */
  readonly keyIndex: number;
  readonly row: Omit<NewChannel, 'id' | 'key'> & { key: string };
}

export const channelReads = [
  'id',
  'type',
  'key',
  'openai_organization',
  'test_model',
  'status',
  'name',
  'weight',
  'created_time',
  'test_time',
  'response_time',
  'base_url',
  'other',
  'balance',
  'balance_updated_time',
  'models',
  'group',
  'used_quota',
  'model_mapping',
  'status_code_mapping',
  'priority',
  'auto_ban',
  'other_info',
  'tag',
  'setting',
  'param_override',
  'header_override',
  'channel_info',
  'max_input_tokens',
  // one-api: `config` (JSON: region, api_version, plugin, ...) beside the deprecated `other`
  'config',
] as const;

export const channelDrops: Readonly<Record<string, string>> = {
  remark: 'Turnpike has no such field',
  settings: 'new-api per-type extras (Azure responses version, Vertex key type, ...) have no Turnpike field',
  system_prompt: "one-api's channel system prompt has no Turnpike field",
  need_reconcile: 'Turnpike has no such field',
};

/**
 * one-api numbers channel types differently from new-api (whose numbering Turnpike's catalogue follows, its video
 * types too: Kling 50, Jimeng 51, Vidu 52, Doubao video 54, Sora 55, so a new-api type is kept as it is) from
 * type 2 on. Each entry: the one-api type -> the Turnpike type and, for providers that only differ by address,
 * the base URL one-api filled in when the channel had none.
 */
const ONE_API_TYPES: Readonly<Record<number, { type: number; baseUrl?: string }>> = {
  2: { type: 1, baseUrl: 'https://oa.api2d.net' },
  4: { type: 1, baseUrl: 'https://api.closeai-proxy.xyz' },
  5: { type: 1, baseUrl: 'https://api.openai-sb.com' },
  6: { type: 1, baseUrl: 'https://api.openaimax.com' },
  7: { type: 1, baseUrl: 'https://api.ohmygpt.com' },
  9: { type: 1, baseUrl: 'https://api.caipacity.com' },
  10: { type: 1, baseUrl: 'https://api.aiproxy.io' },
  12: { type: 1, baseUrl: 'https://api.api2gpt.com' },
  13: { type: 1, baseUrl: 'https://api.aigc2d.com' },
  26: { type: 1, baseUrl: 'https://api.baichuan-ai.com' },
  27: { type: 35 },
  28: { type: 42 },
  29: { type: 1, baseUrl: 'https://api.groq.com/openai' },
  30: { type: 4 },
  32: { type: 1, baseUrl: 'https://api.stepfun.com' },
  34: { type: 49 },
  35: { type: 34 },
  36: { type: 43 },
  37: { type: 39 },
  39: { type: 1, baseUrl: 'https://api.together.xyz' },
  40: { type: 45 },
  41: { type: 1, baseUrl: 'https://api.novita.ai/v3/openai' },
  42: { type: 41 },
  44: { type: 40 },
  45: { type: 48 },
  47: { type: 46 },
  50: { type: 1 },
};

export interface ChannelMapContext {
  /** The source is one-api (its type numbers and `config` column). */
  readonly isOneApi: boolean;
}

export type ChannelMapResult = { channels: ImportedChannel[]; notes: string[] } | { skip: string };

function objectOf(value: unknown): Record<string, unknown> | undefined {
  const parsed = toJson(value);
  return parsed && typeof parsed === 'object' && !Array.isArray(parsed)
    ? (parsed as Record<string, unknown>)
    : undefined;
}

/** The keys of a channel: every line (or JSON array item) of a multi-key channel, else the whole key. */
export function channelKeysOf(key: string, isMultiKey: boolean): string[] {
  const trimmed = key.trim();
  if (!trimmed) return [];
  if (!isMultiKey) return [trimmed];
  if (trimmed.startsWith('[')) {
    const parsed = toJson(trimmed);
    if (Array.isArray(parsed))
      return parsed.map((item) => (typeof item === 'string' ? item : JSON.stringify(item))).filter(Boolean);
  }
  return trimmed
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter(Boolean);
}

export function mapChannel(r: SourceRow, context: ChannelMapContext): ChannelMapResult {
  const sourceId = toInt(r.id);
  const notes: string[] = [];
  let type = toInt(r.type);
  let baseUrl = toText(r.base_url).trim();
  let other = toText(r.other);
  if (context.isOneApi && type >= 2) {
    const mapped = ONE_API_TYPES[type];
    if (mapped) {
      if (!baseUrl && mapped.baseUrl) baseUrl = mapped.baseUrl;
      type = mapped.type;
    }
    const config = objectOf(r.config);
    if (config) {
      // one-api moved the per-type extra from `other` to `config`; Turnpike reads it from `other`.
      const extra = config.api_version ?? config.region ?? config.plugin ?? config.library_id;
      if (!other && typeof extra === 'string') other = extra;
      const unused = Object.keys(config).filter(
        (k) => !['api_version', 'region', 'plugin', 'library_id'].includes(k) && config[k] !== '',
      );
      if (unused.length > 0)
        notes.push(`channel ${sourceId}: config fields not carried: ${unused.join(', ')}`);
    }
  }
  if (!findProviderType(type)) return { skip: `type ${toInt(r.type)} is not a channel type Turnpike knows` };

  const info = objectOf(r.channel_info);
  const isMultiKey = info?.is_multi_key === true;
  const keys = channelKeysOf(toText(r.key), isMultiKey);
  if (keys.length === 0) return { skip: 'no key' };

  const setting = objectOf(r.setting) ?? {};
  const headers = objectOf(r.header_override);
  if (headers && Object.keys(headers).length > 0) {
    setting.headers = { ...(objectOf(setting.headers) ?? {}), ...headers };
  }
  const settingText = Object.keys(setting).length > 0 ? JSON.stringify(setting) : toNullableText(r.setting);
  const status = toInt(r.status, 1);
  const name = toText(r.name).slice(0, 255);
  const base = {
    type,
    openaiOrganization: toNullableText(r.openai_organization),
    testModel: toNullableText(r.test_model),
    weight: toInt(r.weight),
    createdTime: toInt(r.created_time),
    testTime: toInt(r.test_time),
    responseTime: toInt(r.response_time),
    baseUrl,
    other,
    balance: toNumber(r.balance),
    balanceUpdatedTime: toInt(r.balance_updated_time),
    models: toText(r.models),
    group: (toText(r.group) || 'default').slice(0, 255),
    modelMapping: toNullableText(r.model_mapping),
    statusCodeMapping: toNullableText(r.status_code_mapping)?.slice(0, 1024) ?? null,
    priority: toInt(r.priority),
    autoBan: toInt(r.auto_ban, 1),
    tag: toNullableText(r.tag)?.slice(0, 255) ?? null,
    setting: settingText,
    paramOverride: toNullableText(r.param_override),
    maxInputTokens: toInt(r.max_input_tokens),
  };
  const otherInfoText = toNullableText(r.other_info);
  const row = {
    ...base,
    name,
    status,
    usedQuota: toInt(r.used_quota),
    otherInfo: otherInfoText,
  };
  if (!isMultiKey)
    return { channels: [{ sourceId, keyIndex: 0, row: { ...row, key: keys[0] as string } }], notes };
  // The source's positions, statuses, reasons and times as they were; the mode as the source named it.
  const ring = ringOf(type, joinKeys(type, keys, true), parseChannelInfo(JSON.stringify(info)));
  const sourceMode = info?.multi_key_mode;
  const fullRing = { ...ring, mode: isMultiKeyMode(sourceMode) ? sourceMode : MultiKeyMode.Random };
  const statusPatch = ringStatusPatch(
    { status, otherInfo: otherInfoText },
    fullRing,
    Math.floor(Date.now() / 1000),
  );
  return {
    channels: [
      {
        sourceId,
        keyIndex: 0,
        row: {
          ...row,
          ...statusPatch,
          key: joinKeys(type, fullRing.keys, true),
          channelInfo: JSON.stringify(infoOfRing(fullRing)),
        },
      },
    ],
    notes,
  };
}

/** The `imported_from` marker of a row made for a further key of a multi-key channel. */
export function importedFromOf(otherInfo: string | null): { channel: number; key: number } | undefined {
  const marker = objectOf(otherInfo)?.imported_from;
  if (!marker || typeof marker !== 'object') return undefined;
  const { channel, key } = marker as Record<string, unknown>;
  return typeof channel === 'number' && typeof key === 'number' ? { channel, key } : undefined;
}
