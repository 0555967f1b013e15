/**
 * States of drawing (Midjourney) and creative (Suno, ...) tasks as the upstreams report them and the task logs
 * show them (reference §9.4, spec 03). A task is finished once it is SUCCESS or FAILURE; only the step into one of
 * those is ever written, once (relay/src/tasks/finish.ts).
 */
export const TaskStatus = {
  NotStart: 'NOT_START',
  Submitted: 'SUBMITTED',
  Queued: 'QUEUED',
  InProgress: 'IN_PROGRESS',
  /** Midjourney: waiting for the window of a modal action. */
  Modal: 'MODAL',
  Failure: 'FAILURE',
  Success: 'SUCCESS',
  Unknown: 'UNKNOWN',
} as const;
export type TaskStatus = (typeof TaskStatus)[keyof typeof TaskStatus];

export const FINISHED_TASK_STATUSES: readonly string[] = [TaskStatus.Success, TaskStatus.Failure];

export const isTaskFinished = (status: string): boolean => FINISHED_TASK_STATUSES.includes(status);

/**
 * The `platform` column of creative tasks. `video`: OpenAI's video API as clients call it (`/v1/videos`), whatever
 * channel serves it; the row's `task_id` is the gateway's own id, the upstream's is in `properties`.
 */
export const TaskPlatform = { Suno: 'suno', Video: 'video' } as const;
export type TaskPlatform = (typeof TaskPlatform)[keyof typeof TaskPlatform];
