/**
 * A video task as the tasks table keeps it (`platform = 'video'`): `task_id` is the gateway's own id, the one the
 * client sees; `properties` holds the upstream's id and what the submit asked and was priced at; `data` the
 * upstream's last answer. Read back in OpenAI's `video` shape.
 */
import { randomBytes } from 'node:crypto';
import type { Task } from '@turnpike/core/db/schema/index';
import { TaskStatus } from '@turnpike/core/domain/tasks';
import { type ClientVideo, clientStatusOf, isVideoSize, progressNumber } from './wire.ts';

export interface VideoProperties {
  /** The job's id on its channel: never shown to the client. */
  upstream_id: string;
  /** The model the client named (priced and shown). */
  model: string;
  /** The requested length, in seconds: what was held and charged. */
  seconds: number;
  size: string;
  /** Quota per second of output (price × group ratio × size tier × QuotaPerUnit). */
  per_second_quota: number;
  prompt: string;
  /** The gateway id of the video this one remixes. */
  remixed_from: string | null;
  /** Deleted by its owner (`DELETE /v1/videos/{id}`): kept for the task log, gone for the client. */
  deleted?: boolean;
}

/** The task's properties, with safe values for a row written by something else. */
export function propertiesOf(row: Pick<Task, 'properties'>): VideoProperties {
  const p = (row.properties ?? {}) as Partial<Record<keyof VideoProperties, unknown>>;
  const text = (value: unknown) => (typeof value === 'string' ? value : '');
  const number = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) ? value : 0);
  return {
    upstream_id: text(p.upstream_id),
    model: text(p.model),
    seconds: number(p.seconds),
    size: text(p.size),
    per_second_quota: number(p.per_second_quota),
    prompt: text(p.prompt),
    remixed_from: typeof p.remixed_from === 'string' ? p.remixed_from : null,
    deleted: p.deleted === true,
  };
}

/** A new gateway video id: OpenAI's `video_` prefix and 128 random bits. */
export const newVideoId = (): string => `video_${randomBytes(16).toString('hex')}`;

/** A video id a client may name: what {@link newVideoId} makes. */
export const isVideoId = (value: unknown): value is string =>
  typeof value === 'string' && /^video_[0-9a-f]{32}$/.test(value);

/** The stored task as the client reads it. */
export function toClientVideo(row: Task): ClientVideo {
  const properties = propertiesOf(row);
  const data = (row.data ?? {}) as Record<string, unknown>;
  const failed = row.status === TaskStatus.Failure;
  const seconds = typeof data.seconds === 'string' || typeof data.seconds === 'number' ? data.seconds : '';
  return {
    id: row.taskId,
    object: 'video',
    model: properties.model,
    status: clientStatusOf(row.status),
    progress: progressNumber(row.progress),
    created_at: row.submitTime,
    completed_at: row.status === TaskStatus.Success ? row.finishTime : null,
    expires_at: typeof data.expires_at === 'number' ? data.expires_at : null,
    error: failed ? { code: 'video_generation_failed', message: row.failReason } : null,
    prompt: properties.prompt || null,
    remixed_from_video_id: properties.remixed_from,
    seconds: String(seconds || properties.seconds),
    size: isVideoSize(data.size) ? data.size : properties.size,
  };
}
