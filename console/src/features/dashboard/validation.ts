import { fromLocalInput } from '../logs/rules.ts';
import { bucketCount, type Granularity, SELF_MAX_SPAN_SECONDS } from './buckets.ts';

/** The most points one chart draws; past this the chart asks for a coarser granularity. */
export const MAX_BUCKETS = 800;

/** The dashboard filter form as typed (datetime-local strings). */
export interface DataFilterInput {
  start: string;
  end: string;
  username: string;
  granularity: Granularity;
}

export type DataFilterErrors = Partial<Record<keyof DataFilterInput, string>>;

/** The longest username the server stores. */
export const USERNAME_MAX = 64;

/**
 * Checks of the dashboard filters; each answer is a key of the `dashboard` namespace. An empty end means now.
 * A user may look at most 30 days back at once (the server's limit); an admin may ask any range, but a chart
 * of more than MAX_BUCKETS points is refused in favour of a coarser granularity.
 */
export function validateDataFilters(
  input: DataFilterInput,
  admin: boolean,
  now = Math.floor(Date.now() / 1000),
): DataFilterErrors {
  const errors: DataFilterErrors = {};
  const start = fromLocalInput(input.start);
  const end = input.end ? fromLocalInput(input.end) : now;
  if (!start) errors.start = 'validation.startRequired';
  else if (input.end && !end) errors.end = 'validation.endInvalid';
  else if (start > end) errors.end = 'validation.endBeforeStart';
  else if (!admin && end - start > SELF_MAX_SPAN_SECONDS) errors.start = 'validation.spanTooLong';
  else if (bucketCount(start, end, input.granularity, MAX_BUCKETS) > MAX_BUCKETS) {
    errors.granularity = 'validation.tooManyPoints';
  }
  if (admin && input.username.trim().length > USERNAME_MAX) errors.username = 'validation.usernameTooLong';
  return errors;
}
