import { z } from 'zod';
import type { Log } from '../db/schema/logs.ts';
import { LogType } from '../domain/logs.ts';
import { pageQuerySchema } from './envelope.ts';

/** Query strings send empty fields for untouched filters; they mean "no filter", not "invalid". */
const blankToUndefined = (value: unknown) =>
  value === '' || value === null || (typeof value === 'string' && value.trim() === '') ? undefined : value;

/** An optional whole number of at least `min` from a query string, with a message naming the field. */
export function queryInt(name: string, what: string, min = 0) {
  return z.preprocess(
    blankToUndefined,
    z.coerce
      .number({ error: `${name} must be ${what}` })
      .int(`${name} must be ${what}`)
      .min(min, `${name} must be ${what}`)
      .max(Number.MAX_SAFE_INTEGER, `${name} must be ${what}`)
      .optional(),
  );
}

/** An optional trimmed text filter from a query string. */
export function queryText(name: string, max = 255) {
  return z.preprocess(
    blankToUndefined,
    z
      .string({ error: `${name} must be text` })
      .trim()
      .max(max, `${name} must be at most ${max} characters`)
      .optional(),
  );
}

const LOG_TYPES = Object.values(LogType) as number[];

/** Pages of log lists count from 1, like every other paged list. */
const logPage = pageQuerySchema.shape;

const ownLogFilters = {
  /** 0 (or absent) lists every type. */
  type: z.preprocess(
    blankToUndefined,
    z.coerce
      .number({ error: `type must be one of ${LOG_TYPES.join(', ')}` })
      .int(`type must be one of ${LOG_TYPES.join(', ')}`)
      .refine((value) => LOG_TYPES.includes(value), `type must be one of ${LOG_TYPES.join(', ')}`)
      .optional(),
  ),
  token_name: queryText('token_name', 64),
  model_name: queryText('model_name'),
  start_timestamp: queryInt('start_timestamp', 'a Unix time in seconds'),
  end_timestamp: queryInt('end_timestamp', 'a Unix time in seconds'),
  group: queryText('group', 64),
};

const adminLogFilters = {
  ...ownLogFilters,
  username: queryText('username', 64),
  /** A channel id. */
  channel: queryInt('channel', 'a channel id (a whole number)'),
};

/** `GET /api/log/self/` and `/api/log/self/stat`. */
/** `GET /api/log/token?key=sk-…`: the usage of one key. */
export const tokenLogQuerySchema = z.object({ key: z.string().max(128, 'key is too long').optional() });

export const selfLogQuerySchema = z.object({ ...ownLogFilters, ...logPage });
export type SelfLogQuery = z.infer<typeof selfLogQuerySchema>;

/** `GET /api/log/` and `/api/log/stat` (admin): every filter of the self call plus username and channel. */
export const adminLogQuerySchema = z.object({ ...adminLogFilters, ...logPage });
export type AdminLogQuery = z.infer<typeof adminLogQuerySchema>;

/** `GET /api/log/search` and `/api/log/self/search`. */
export const logSearchQuerySchema = z.object({
  keyword: z.preprocess(
    (value) => (value === undefined || value === null ? '' : value),
    z
      .string({ error: 'keyword must be text' })
      .trim()
      .min(1, 'enter a keyword to search for')
      .max(255, 'keyword must be at most 255 characters'),
  ),
  ...logPage,
});
export type LogSearchQuery = z.infer<typeof logSearchQuerySchema>;

/** `DELETE /api/log/?target_timestamp=`: logs created before this time are deleted. */
export const deleteLogsQuerySchema = z.object({
  target_timestamp: z.preprocess(
    blankToUndefined,
    z.coerce
      .number({ error: 'target_timestamp is required: a Unix time in seconds' })
      .int('target_timestamp must be a Unix time in seconds')
      .positive('target_timestamp must be a Unix time in seconds'),
  ),
});

/**
 * Keys of a log's `other` JSON that only administrators see: which channels served the request and how the
 * requested model was mapped upstream. Users see the prices and token details they were billed by.
 */
export const ADMIN_ONLY_OTHER_KEYS: readonly string[] = [
  'admin_info',
  'is_model_mapped',
  'upstream_model_name',
];

const isAdminOnlyOtherKey = (key: string) => ADMIN_ONLY_OTHER_KEYS.includes(key) || key.startsWith('channel');

/**
 * The `other` JSON text a user may see: admin-only keys removed. Text that is not a JSON object cannot be
 * checked, so a user gets an empty string rather than something that might carry admin details.
 */
export function userVisibleOther(other: string): string {
  if (!other) return '';
  let parsed: unknown;
  try {
    parsed = JSON.parse(other);
  } catch {
    return '';
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return '';
  const kept = Object.entries(parsed as Record<string, unknown>).filter(([key]) => !isAdminOnlyOtherKey(key));
  return JSON.stringify(Object.fromEntries(kept));
}

/** A log row as a user sees it: their own rows, no channel, no admin-only details. */
export interface SelfLogView {
  id: number;
  user_id: number;
  created_at: number;
  type: number;
  content: string;
  username: string;
  token_name: string;
  token_id: number;
  model_name: string;
  quota: number;
  prompt_tokens: number;
  completion_tokens: number;
  use_time: number;
  is_stream: boolean;
  group: string;
  ip: string;
  request_id: string;
  other: string;
}

/** A log row as an administrator sees it: everything, with the channel id and its current name. */
export interface AdminLogView extends SelfLogView {
  channel: number;
  channel_name: string;
}

function baseView(row: Log): Omit<SelfLogView, 'other'> {
  return {
    id: row.id,
    user_id: row.userId,
    created_at: row.createdAt,
    type: row.type,
    content: row.content,
    username: row.username,
    token_name: row.tokenName,
    token_id: row.tokenId,
    model_name: row.modelName,
    quota: row.quota,
    prompt_tokens: row.promptTokens,
    completion_tokens: row.completionTokens,
    use_time: row.useTime,
    is_stream: row.isStream,
    group: row.group,
    ip: row.ip,
    request_id: row.requestId ?? '',
  };
}

export function toSelfLogView(row: Log): SelfLogView {
  return { ...baseView(row), other: userVisibleOther(row.other) };
}

export function toAdminLogView(row: Log, channelName: string | null | undefined): AdminLogView {
  return { ...baseView(row), other: row.other, channel: row.channelId, channel_name: channelName ?? '' };
}

/** `GET /api/log/stat`: quota spent under the filters; requests and tokens of the last 60 seconds. */
export interface LogStat {
  quota: number;
  rpm: number;
  tpm: number;
}
