import { z } from 'zod';
import type { Midjourney } from '../db/schema/midjourneys.ts';
import type { Task } from '../db/schema/tasks.ts';
import { TaskPlatform } from '../domain/tasks.ts';
import { isRecord } from '../json.ts';
import { PAGE_SIZE_DEFAULT, PAGE_SIZE_MAX } from './envelope.ts';
import { queryInt, queryText } from './logs.ts';

/** Task lists page from 0 (the console loads page 0 first) and answer a plain list (batches too). */
export const taskPage = {
  p: z.coerce.number().int().min(0).catch(0).default(0),
  page_size: z.coerce
    .number()
    .int()
    .min(1)
    .max(PAGE_SIZE_MAX)
    .catch(PAGE_SIZE_DEFAULT)
    .default(PAGE_SIZE_DEFAULT),
};

const millis = {
  start_timestamp: queryInt('start_timestamp', 'a Unix time in milliseconds'),
  end_timestamp: queryInt('end_timestamp', 'a Unix time in milliseconds'),
};
const seconds = {
  start_timestamp: queryInt('start_timestamp', 'a Unix time in seconds'),
  end_timestamp: queryInt('end_timestamp', 'a Unix time in seconds'),
};
const channelId = { channel_id: queryInt('channel_id', 'a channel id (a whole number)') };

/** `GET /api/mj/self`: drawing tasks, times in milliseconds. */
export const selfDrawingQuerySchema = z.object({ ...taskPage, ...millis, mj_id: queryText('mj_id', 191) });
/** `GET /api/mj/` (admin) adds the channel filter. */
export const adminDrawingQuerySchema = selfDrawingQuerySchema.extend(channelId);
export type AdminDrawingQuery = z.infer<typeof adminDrawingQuerySchema>;

/** `GET /api/task/self`: creative tasks, times in seconds. */
export const selfTaskQuerySchema = z.object({ ...taskPage, ...seconds, task_id: queryText('task_id', 191) });
/** `GET /api/task/` (admin) adds the channel filter. */
export const adminTaskQuerySchema = selfTaskQuerySchema.extend(channelId);
export type AdminTaskQuery = z.infer<typeof adminTaskQuerySchema>;

/** A drawing task as its owner sees it; administrators also get `channel_id`. */
export interface DrawingView {
  id: number;
  user_id: number;
  code: number;
  action: string;
  mj_id: string;
  prompt: string;
  prompt_en: string;
  description: string;
  state: string;
  submit_time: number;
  start_time: number;
  finish_time: number;
  image_url: string;
  status: string;
  progress: string;
  fail_reason: string;
  quota: number;
  buttons: string;
  properties: string;
  channel_id?: number;
}

/**
 * `imageUrl` is what the caller should load: the stored upstream address, or this gateway's image proxy when
 * MjForwardUrlEnabled is on (the service decides).
 */
export function toDrawingView(row: Midjourney, options: { admin: boolean; imageUrl: string }): DrawingView {
  return {
    id: row.id,
    user_id: row.userId,
    code: row.code,
    action: row.action,
    mj_id: row.mjId,
    prompt: row.prompt,
    prompt_en: row.promptEn,
    description: row.description,
    state: row.state,
    submit_time: row.submitTime,
    start_time: row.startTime,
    finish_time: row.finishTime,
    image_url: options.imageUrl,
    status: row.status,
    progress: row.progress,
    fail_reason: row.failReason,
    quota: row.quota,
    buttons: row.buttons,
    properties: row.properties,
    ...(options.admin ? { channel_id: row.channelId } : {}),
  };
}

/** A creative task as its owner sees it; administrators also get `channel_id`. */
export interface TaskView {
  id: number;
  user_id: number;
  created_at: number;
  updated_at: number;
  task_id: string;
  platform: string;
  action: string;
  status: string;
  fail_reason: string;
  submit_time: number;
  start_time: number;
  finish_time: number;
  progress: string;
  quota: number;
  properties: unknown;
  data: unknown;
  channel_id?: number;
}

/**
 * What the task log shows of a video task's stored request: what was asked (model, length, size, prompt, the video it
 * remixes). The upstream's id is for administrators only (to ask the provider about a job); the price per second
 * is the bill's business, not the log's.
 */
function videoPropertiesView(properties: unknown, admin: boolean): Record<string, unknown> | null {
  if (!isRecord(properties)) return null;
  const { model, seconds, size, prompt, remixed_from, deleted, upstream_id } = properties;
  return {
    model,
    seconds,
    size,
    prompt,
    remixed_from: remixed_from ?? null,
    ...(deleted === true ? { deleted: true } : {}),
    ...(admin ? { upstream_id } : {}),
  };
}

/**
 * What the task log shows of a video task's last upstream answer: its state and the clip's real length and size,
 * never the provider's file address (the gateway's own `/v1/videos/{id}/content` serves the clip) or its job id.
 */
function videoDataView(data: unknown): Record<string, unknown> | null {
  if (!isRecord(data)) return null;
  const error = isRecord(data.error)
    ? { code: data.error.code ?? null, message: data.error.message ?? null }
    : null;
  return {
    status: data.status ?? null,
    progress: data.progress ?? null,
    seconds: data.seconds ?? null,
    size: data.size ?? null,
    error,
  };
}

export function toTaskView(row: Task, options: { admin: boolean }): TaskView {
  const isVideo = row.platform === TaskPlatform.Video;
  return {
    id: row.id,
    user_id: row.userId,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
    task_id: row.taskId,
    platform: row.platform,
    action: row.action,
    status: row.status,
    fail_reason: row.failReason,
    submit_time: row.submitTime,
    start_time: row.startTime,
    finish_time: row.finishTime,
    progress: row.progress,
    quota: row.quota,
    properties: isVideo ? videoPropertiesView(row.properties, options.admin) : (row.properties ?? null),
    data: isVideo ? videoDataView(row.data) : (row.data ?? null),
    ...(options.admin ? { channel_id: row.channelId } : {}),
  };
}
