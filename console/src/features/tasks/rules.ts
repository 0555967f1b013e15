import type { MjAction } from '@turnpike/core/domain/midjourney-actions';
import type { TagColor } from '../../lib/format.ts';

/** A status tag: the key of its label in the `tasks` namespace (`status.<name>`) and its colour. */
export interface StatusLook {
  name: string;
  color: TagColor;
}

/** Drawing task statuses (spec 03 section 4); anything else is shown as unknown. */
export const DRAWING_STATUSES: Record<string, StatusLook> = {
  SUCCESS: { name: 'success', color: 'green' },
  NOT_START: { name: 'notStart', color: 'gray' },
  SUBMITTED: { name: 'submitted', color: 'yellow' },
  IN_PROGRESS: { name: 'inProgress', color: 'blue' },
  FAILURE: { name: 'failure', color: 'red' },
  MODAL: { name: 'modal', color: 'orange' },
};

/** Creative task statuses; the empty string means the task is still being submitted. */
export const TASK_STATUSES: Record<string, StatusLook> = {
  SUCCESS: { name: 'success', color: 'green' },
  NOT_START: { name: 'notStart', color: 'gray' },
  SUBMITTED: { name: 'submitted', color: 'yellow' },
  IN_PROGRESS: { name: 'inProgress', color: 'blue' },
  FAILURE: { name: 'failure', color: 'red' },
  QUEUED: { name: 'queued', color: 'orange' },
  UNKNOWN: { name: 'unknown', color: 'gray' },
  '': { name: 'submitting', color: 'purple' },
};

const UNKNOWN_STATUS: StatusLook = { name: 'unknown', color: 'gray' };

export const drawingStatusLook = (status: string): StatusLook => DRAWING_STATUSES[status] ?? UNKNOWN_STATUS;
export const taskStatusLook = (status: string): StatusLook => TASK_STATUSES[status] ?? UNKNOWN_STATUS;

/**
 * The submit result of a drawing task: the code the upstream answered at submission. 1 is accepted; 21 (the
 * task already exists) and 22 (queued) are accepted too; 23 and 24 are refusals; 0 was never submitted.
 */
export const SUBMIT_CODES: Record<number, StatusLook> = {
  0: { name: 'notSubmitted', color: 'gray' },
  1: { name: 'submitted', color: 'green' },
  21: { name: 'exists', color: 'yellow' },
  22: { name: 'queued', color: 'orange' },
  23: { name: 'queueFull', color: 'red' },
  24: { name: 'banned', color: 'red' },
};
/** Any other code is a failed submission; the label shows the code. */
export const submitCodeLook = (code: number): StatusLook =>
  SUBMIT_CODES[code] ?? { name: 'failed', color: 'red' };

/**
 * Drawing actions with a label (`action.<ACTION>`): every action the relay can store (the shared MjAction set, so
 * a new action does not compile without its colour); an action not listed (an old row) is shown as sent.
 */
export const DRAWING_ACTIONS: Record<string, TagColor> = {
  IMAGINE: 'blue',
  UPSCALE: 'orange',
  VARIATION: 'purple',
  HIGH_VARIATION: 'purple',
  LOW_VARIATION: 'purple',
  PAN: 'blue',
  REROLL: 'blue',
  ZOOM: 'green',
  CUSTOM_ZOOM: 'green',
  INPAINT: 'yellow',
  DESCRIBE: 'yellow',
  BLEND: 'green',
  SHORTEN: 'gray',
  SWAP_FACE: 'red',
  UPLOAD: 'gray',
  MODAL: 'yellow',
  VIDEO: 'red',
  EDITS: 'orange',
} satisfies Record<MjAction, TagColor>;

/**
 * The videos of a drawing (Midjourney-Proxy Plus video tasks): the relay keeps `videoUrl` and `videoUrls`
 * (`[{ url }]`, or plain strings) in the row's `properties` JSON. Only http(s) addresses, each once; an unreadable
 * `properties` has none.
 */
export function videoUrlsOf(properties: string): string[] {
  let parsed: unknown;
  try {
    parsed = properties ? JSON.parse(properties) : undefined;
  } catch {
    return [];
  }
  if (typeof parsed !== 'object' || parsed === null) return [];
  const { videoUrl, videoUrls } = parsed as { videoUrl?: unknown; videoUrls?: unknown };
  const listed = Array.isArray(videoUrls)
    ? videoUrls.map((entry) => (typeof entry === 'string' ? entry : (entry as { url?: unknown } | null)?.url))
    : [];
  const urls = [videoUrl, ...listed].filter(
    (url): url is string => typeof url === 'string' && /^https?:\/\//i.test(url),
  );
  return [...new Set(urls)];
}

/** Creative task types (spec 03 section 4; GENERATE and REMIX are video jobs). */
export const TASK_ACTIONS: Record<string, TagColor> = {
  MUSIC: 'blue',
  LYRICS: 'purple',
  GENERATE: 'red',
  REMIX: 'orange',
};
/** Platforms with a display name; others are shown as sent. */
export const TASK_PLATFORMS: Record<string, TagColor> = { suno: 'green', video: 'red' };

/**
 * Where a finished video task is downloaded: the gateway's own `/v1/videos/{id}/content` (called with an API key of
 * the task's owner), never the upstream's address. Null for anything but a finished video task.
 */
export function videoContentUrl(
  row: { platform: string; status: string; task_id: string },
  address: string,
): string | null {
  if (row.platform !== 'video' || row.status !== 'SUCCESS' || !row.task_id) return null;
  return `${address.replace(/\/+$/, '')}/v1/videos/${encodeURIComponent(row.task_id)}/content`;
}

/** Channel tags get a colour from their id so that one channel always looks the same. */
const CHANNEL_COLORS: readonly TagColor[] = ['blue', 'green', 'orange', 'purple', 'yellow', 'red'];
export const channelColor = (id: number): TagColor =>
  CHANNEL_COLORS[Math.abs(id) % CHANNEL_COLORS.length] ?? 'blue';

/** Time spent, in seconds, between submission and finish; null while the task is not finished. */
export function spentSeconds(submit: number, finish: number, unit: 'ms' | 's'): number | null {
  if (!submit || !finish || finish < submit) return null;
  return unit === 'ms' ? (finish - submit) / 1000 : finish - submit;
}

/** Time spent is green, and red above 60 seconds (spec 03 section 9). */
export const spentColor = (seconds: number): TagColor => (seconds > 60 ? 'red' : 'green');

/** "12.3" for fractional seconds, "12" for whole ones. */
export const formatSeconds = (seconds: number): string =>
  Number.isInteger(seconds) ? String(seconds) : seconds.toFixed(1);

/** A progress text such as "40%" (or "40") as a number from 0 to 100; null when it is not numeric. */
export function parseProgress(progress: string): number | null {
  const match = /^\s*(\d+(?:\.\d+)?)\s*%?\s*$/.exec(progress ?? '');
  if (!match) return null;
  return Math.min(100, Math.max(0, Number(match[1])));
}

const HOUR_MS = 3600_000;
const DAY_MS = 24 * HOUR_MS;

/** The drawing log's default range, in milliseconds: from 30 days before now to 1 hour after (spec 03 section 9). */
export function defaultDrawingRange(now = Date.now()): { start: number; end: number } {
  return { start: now - 30 * DAY_MS, end: now + HOUR_MS };
}

/** The task log's default range, in milliseconds: from the start of today, with no end. */
export function defaultTaskRange(now = new Date()): { start: number; end: number } {
  const today = new Date(now);
  today.setHours(0, 0, 0, 0);
  return { start: today.getTime(), end: 0 };
}

/** `YYYY-MM-DDTHH:mm` for a datetime-local input, in local time; 0 gives an empty field. */
export function toLocalInput(ms: number): string {
  if (!ms) return '';
  const d = new Date(ms);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}

/** A datetime-local value back to milliseconds; empty or invalid gives 0 (no bound). */
export function fromLocalInput(value: string): number {
  if (!value) return 0;
  const ms = new Date(value).getTime();
  return Number.isNaN(ms) ? 0 : ms;
}

/** The drawing log's columns, in the spec's order. */
export const DRAWING_COLUMNS = [
  'submitTime',
  'duration',
  'channel',
  'type',
  'taskId',
  'submitResult',
  'status',
  'progress',
  'image',
  'prompt',
  'promptEn',
  'failReason',
] as const;
export type DrawingColumn = (typeof DRAWING_COLUMNS)[number];

/** The task log's columns, in the spec's order. */
export const TASK_COLUMNS = [
  'submitTime',
  'finishTime',
  'progress',
  'duration',
  'channel',
  'platform',
  'type',
  'taskId',
  'status',
  'result',
  'failReason',
] as const;
export type TaskColumn = (typeof TASK_COLUMNS)[number];

/** Only administrators see which channel ran a task. */
export const ADMIN_ONLY_COLUMNS: readonly string[] = ['channel'];

export function visibleColumns<C extends string>(columns: readonly C[], admin: boolean): C[] {
  return columns.filter((c) => admin || !ADMIN_ONLY_COLUMNS.includes(c));
}
