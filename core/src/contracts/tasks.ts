import { z } from 'zod';
import type { Midjourney } from '../db/schema/midjourneys.ts';
import type { Task } from '../db/schema/tasks.ts';
import { PAGE_SIZE_DEFAULT, PAGE_SIZE_MAX } from './envelope.ts';
import { queryInt, queryText } from './logs.ts';

/** Task lists page from 0 (the console loads page 0 first) and answer a plain list. */
const taskPage = {
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

export function toTaskView(row: Task, options: { admin: boolean }): TaskView {
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
    properties: row.properties ?? null,
    data: row.data ?? null,
    ...(options.admin ? { channel_id: row.channelId } : {}),
  };
}
