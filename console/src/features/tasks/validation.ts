/** Checks of the task log filter forms; each answer is a key of the `tasks` namespace. */
export interface TaskFilterInput {
  start: string;
  end: string;
  channel: string;
  taskId: string;
}

export type TaskFilterErrors = Partial<Record<keyof TaskFilterInput, string>>;

/** The longest upstream task id the server keeps. */
export const TASK_ID_MAX = 191;

export function validateTaskFilters(input: TaskFilterInput, admin: boolean): TaskFilterErrors {
  const errors: TaskFilterErrors = {};
  if (input.start && input.end && new Date(input.start).getTime() > new Date(input.end).getTime()) {
    errors.end = 'validation.endBeforeStart';
  }
  if (admin && input.channel.trim() && !/^\d+$/.test(input.channel.trim())) {
    errors.channel = 'validation.channelId';
  }
  if (input.taskId.trim().length > TASK_ID_MAX) {
    errors.taskId = 'validation.taskIdLength';
  }
  return errors;
}
