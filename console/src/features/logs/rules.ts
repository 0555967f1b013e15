import { LogType } from '@turnpike/core/domain/closed-sets';
import type { TagColor } from '../../lib/format.ts';

export { LogType };

/** Log types (spec 02 section 4), and the error rows the relay writes for failed calls. */
export const LOG_TYPE_NAMES: Record<number, string> = {
  [LogType.Unknown]: 'unknown',
  [LogType.TopUp]: 'topup',
  [LogType.Consume]: 'consume',
  [LogType.Manage]: 'manage',
  [LogType.System]: 'system',
  [LogType.Error]: 'error',
};
const LOG_TYPE_COLORS: Record<number, TagColor> = {
  [LogType.TopUp]: 'blue',
  [LogType.Consume]: 'green',
  [LogType.Manage]: 'orange',
  [LogType.System]: 'purple',
  [LogType.Error]: 'red',
};
export const logTypeColor = (type: number): TagColor => LOG_TYPE_COLORS[type] ?? 'gray';

/** Consumption and unknown rows carry channel, token, group and model details. */
export const hasUsageDetails = (type: number) => type === LogType.Consume || type === LogType.Unknown;

/** Use time (seconds): under 101 green, under 300 orange, otherwise red. */
export function latencyColor(seconds: number): TagColor {
  if (seconds < 101) return 'green';
  if (seconds < 300) return 'orange';
  return 'red';
}

/** First-token time (seconds): under 3 green, under 10 orange, otherwise red. */
export function firstTokenColor(seconds: number): TagColor {
  if (seconds < 3) return 'green';
  if (seconds < 10) return 'orange';
  return 'red';
}

/** The parts of a log's `other` JSON the console shows. */
export interface LogOther {
  model_ratio?: number;
  model_price?: number;
  completion_ratio?: number;
  group_ratio?: number;
  user_group_ratio?: number;
  cache_tokens?: number;
  cache_ratio?: number;
  cache_creation_tokens?: number;
  cache_creation_ratio?: number;
  /** The cache writes by how long the cache keeps them (Anthropic), each with its ratio. */
  cache_creation_tokens_5m?: number;
  cache_creation_ratio_5m?: number;
  cache_creation_tokens_1h?: number;
  cache_creation_ratio_1h?: number;
  /** The long-context tier the call reached: its threshold of prompt tokens and its multipliers. */
  long_context_above?: number;
  long_context_input_ratio?: number;
  long_context_output_ratio?: number;
  long_context_cache_ratio?: number;
  /** The service tier the answer reported, and its multiplier of the token bill. */
  service_tier?: string;
  service_tier_ratio?: number;
  /** Web searches and images billed per unit, each at its USD price. */
  web_search_calls?: number;
  web_search_price?: number;
  image_count?: number;
  image_price?: number;
  /** What the per-unit fees added to the charge, in quota, before the group ratio (docs/adr/0042). */
  fees_quota?: number;
  /** First-token time in milliseconds. */
  frt?: number;
  is_model_mapped?: boolean;
  upstream_model_name?: string;
  reasoning_effort?: string;
  claude?: boolean;
  audio?: boolean;
  ws?: boolean;
  audio_input?: number;
  audio_output?: number;
  text_input?: number;
  text_output?: number;
  audio_ratio?: number;
  audio_completion_ratio?: number;
  admin_info?: { use_channel?: (string | number)[] };
}

/** `other` is JSON text that may be empty or broken; a broken one shows no details rather than failing. */
export function parseOther(other: string): LogOther {
  if (!other) return {};
  try {
    const value: unknown = JSON.parse(other);
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as LogOther) : {};
  } catch {
    return {};
  }
}

/** The channels a request went through, when it was retried (more than one): "3 → 5 → 7". */
export function retryPath(other: LogOther): string | null {
  const used = other.admin_info?.use_channel;
  return used && used.length > 1 ? used.join(' → ') : null;
}

/** The default range: from the start of today to one hour from now. */
export function defaultLogRange(now = new Date()): { start: number; end: number } {
  const today = new Date(now);
  today.setHours(0, 0, 0, 0);
  return { start: Math.floor(today.getTime() / 1000), end: Math.floor(now.getTime() / 1000) + 3600 };
}

/** Every column of the log table, in order; admin-only ones are left out for users. */
export const LOG_COLUMNS = [
  'time',
  'channel',
  'username',
  'token',
  'group',
  'type',
  'model',
  'useTime',
  'prompt',
  'completion',
  'quota',
  'retry',
  'details',
] as const;
export type LogColumn = (typeof LOG_COLUMNS)[number];
const ADMIN_LOG_COLUMNS: readonly LogColumn[] = ['channel', 'username', 'retry'];

export const LOG_COLUMNS_KEY = 'logs-table-columns';

/** Whether the viewer may see a column: the admin-only ones are left out for users. */
export const isLogColumnAllowed = (column: LogColumn, admin: boolean) =>
  admin || !ADMIN_LOG_COLUMNS.includes(column);

/** `YYYY-MM-DDTHH:mm` for a datetime-local input, in local time. */
export function toLocalInput(seconds: number): string {
  if (!seconds) return '';
  const d = new Date(seconds * 1000);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}

/** A datetime-local value back to Unix seconds; empty or invalid gives 0 (no bound). */
export function fromLocalInput(value: string): number {
  if (!value) return 0;
  const ms = new Date(value).getTime();
  return Number.isNaN(ms) ? 0 : Math.floor(ms / 1000);
}
