/**
 * The Suno task API as Suno-API servers speak it (https://github.com/Suno-API/Suno-API: `POST /suno/submit/{music,
 * lyrics}` answering `{code:"success", message, data:<task id>}`, `POST /suno/fetch {ids}` answering the tasks in
 * `data`). Pure: what comes back and how it is read.
 */
import { TaskStatus } from '@turnpike/core/domain/tasks';

export const SUNO_ACTIONS = ['music', 'lyrics'] as const;
export type SunoAction = (typeof SUNO_ACTIONS)[number];

/** The envelope of every Suno-API answer, and of the gateway's answers to Suno clients. */
export interface SunoEnvelope<T> {
  code: string;
  message: string;
  data: T;
}

/** A task as Suno-API reports it and as the gateway answers `/suno/fetch` (times in seconds). */
export interface SunoTask {
  task_id: string;
  action?: string;
  status?: string;
  fail_reason?: string;
  submit_time?: number;
  start_time?: number;
  finish_time?: number;
  progress?: string;
  data?: unknown;
}

/** The task id of an accepted submit, or undefined for a refusal or an unreadable answer. */
export function acceptedTaskId(status: number, body: unknown): string | undefined {
  if (status !== 200 || typeof body !== 'object' || body === null) return undefined;
  const answer = body as Partial<SunoEnvelope<unknown>>;
  return answer.code === 'success' && typeof answer.data === 'string' && answer.data !== ''
    ? answer.data
    : undefined;
}

/** The tasks of a fetch answer (entries without a task id are dropped). */
export function readFetchAnswer(body: unknown): SunoTask[] | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const answer = body as Partial<SunoEnvelope<unknown>>;
  if (answer.code !== 'success' || !Array.isArray(answer.data)) return undefined;
  return answer.data.filter(
    (task): task is SunoTask =>
      typeof task === 'object' && task !== null && typeof (task as SunoTask).task_id === 'string',
  );
}

export function sunoStatusOf(status: string | undefined): string {
  const known: readonly string[] = Object.values(TaskStatus);
  return status && known.includes(status) ? status : TaskStatus.Unknown;
}
