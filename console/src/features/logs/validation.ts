/** Checks of the log filter form; each answer is a key of the `logs` namespace or null. */
export interface LogFilterInput {
  start: string;
  end: string;
  channel: string;
}

export type LogFilterErrors = Partial<Record<keyof LogFilterInput, string>>;

export function validateLogFilters(input: LogFilterInput, admin: boolean): LogFilterErrors {
  const errors: LogFilterErrors = {};
  if (input.start && input.end && new Date(input.start).getTime() > new Date(input.end).getTime()) {
    errors.end = 'validation.endBeforeStart';
  }
  if (admin && input.channel.trim() && !/^\d+$/.test(input.channel.trim())) {
    errors.channel = 'validation.channelId';
  }
  return errors;
}
