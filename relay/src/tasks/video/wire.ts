/**
 * OpenAI's video API as OpenAI and Azure OpenAI (v1 API) speak it
 * (https://platform.openai.com/docs/api-reference/videos): a job is a `video` object whose `status` goes
 * `queued` → `in_progress` → `completed` or `failed`, with a `progress` percentage and the clip's `seconds` and
 * `size`. Pure: how a client's request and an upstream's answer are read, and how the gateway's stored task is
 * answered in the same shape.
 */

import { TaskStatus } from '@turnpike/core/domain/tasks';
import { isRecord } from '@turnpike/core/json';
import type { Dispatcher } from 'undici';

/** The model a create names when it names none (OpenAI's default). */
export const DEFAULT_VIDEO_MODEL = 'sora-2';
/** OpenAI's defaults for a create without `seconds` / `size`. */
export const DEFAULT_VIDEO_SECONDS = 4;
export const DEFAULT_VIDEO_SIZE = '720x1280';
/** The longest clip a create may ask for: above every provider's own limit, so a typo is refused here. */
export const MAX_VIDEO_SECONDS = 60;

export type OpenAiVideoStatus = 'queued' | 'in_progress' | 'completed' | 'failed';

/** A video job as the upstream reports it (only what the gateway reads). */
export interface UpstreamVideo {
  readonly id: string;
  readonly status: string;
  readonly progress?: number;
  readonly seconds?: string | number;
  readonly size?: string;
  readonly created_at?: number;
  readonly completed_at?: number | null;
  readonly expires_at?: number | null;
  readonly error?: { code?: unknown; message?: unknown } | null;
  /** Where the finished clip is downloaded, for channels whose API has no content route of its own (Veo). */
  readonly content_uri?: string;
}

/** The `video` object a client reads (OpenAI's shape). */
export interface ClientVideo {
  id: string;
  object: 'video';
  model: string;
  status: OpenAiVideoStatus;
  progress: number;
  created_at: number;
  completed_at: number | null;
  expires_at: number | null;
  error: { code: string; message: string } | null;
  prompt: string | null;
  remixed_from_video_id: string | null;
  seconds: string;
  size: string;
}

/** An upstream answer that is a video job (an id and a status), else undefined. */
export function readUpstreamVideo(body: unknown): UpstreamVideo | undefined {
  if (!isRecord(body) || typeof body.id !== 'string' || body.id === '' || typeof body.status !== 'string')
    return undefined;
  return body as unknown as UpstreamVideo;
}

/** The task status of an upstream job status; anything unknown stays unfinished (`UNKNOWN`). */
export function taskStatusOf(status: string): TaskStatus {
  switch (status) {
    case 'queued':
      return TaskStatus.Queued;
    case 'in_progress':
      return TaskStatus.InProgress;
    case 'completed':
      return TaskStatus.Success;
    case 'failed':
      return TaskStatus.Failure;
    default:
      return TaskStatus.Unknown;
  }
}

/** How a stored task's status reads to a client. */
export function clientStatusOf(status: string): OpenAiVideoStatus {
  if (status === TaskStatus.Success) return 'completed';
  if (status === TaskStatus.Failure) return 'failed';
  if (status === TaskStatus.InProgress) return 'in_progress';
  return 'queued';
}

/** A clip length: a whole number of seconds, 1 to {@link MAX_VIDEO_SECONDS}, as a number or a numeric string. */
export function parseSeconds(value: unknown): number | undefined {
  const number = typeof value === 'string' && /^\d{1,3}$/.test(value.trim()) ? Number(value.trim()) : value;
  return typeof number === 'number' && Number.isInteger(number) && number >= 1 && number <= MAX_VIDEO_SECONDS
    ? number
    : undefined;
}

/** A size `WIDTHxHEIGHT` (each 1 to 9999 pixels). */
export const isVideoSize = (value: unknown): value is string =>
  typeof value === 'string' && /^[1-9]\d{0,3}x[1-9]\d{0,3}$/.test(value);

/** A percentage as the task log keeps it (`37%`), from the upstream's number. */
export function progressText(progress: unknown, status: TaskStatus): string | undefined {
  if (status === TaskStatus.Success || status === TaskStatus.Failure) return '100%';
  if (typeof progress !== 'number' || !Number.isFinite(progress)) return undefined;
  return `${Math.min(100, Math.max(0, Math.round(progress)))}%`;
}

/** The stored percentage as a number (`37%` → 37). */
export function progressNumber(progress: string): number {
  const number = Number.parseInt(progress, 10);
  return Number.isFinite(number) ? Math.min(100, Math.max(0, number)) : 0;
}

/** The failure an upstream job reports, as text for the task log. */
export function failureOf(video: UpstreamVideo): string {
  const message = isRecord(video.error) && typeof video.error.message === 'string' ? video.error.message : '';
  const code = isRecord(video.error) && typeof video.error.code === 'string' ? video.error.code : '';
  return [code, message].filter((part) => part !== '').join(': ') || 'the video job failed upstream';
}

/** A video API's answer: its status and headers, the body left for the caller to read or pipe. */
export interface UpstreamAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: Dispatcher.ResponseData['body'];
}
