import { fromLocalInput, toLocalInput } from '../logs/rules.ts';
import type { DataFilters } from './api/data.ts';
import { DEFAULT_WINDOW_SECONDS, type Granularity, SELF_MAX_SPAN_SECONDS } from './buckets.ts';
import type { DataFilterInput } from './validation.ts';

/** The first form: the default granularity and its window, up to now. */
export function initialDataForm(
  granularity: Granularity,
  now = Math.floor(Date.now() / 1000),
): DataFilterInput {
  return {
    start: toLocalInput(now - DEFAULT_WINDOW_SECONDS[granularity]),
    end: toLocalInput(now),
    username: '',
    granularity,
  };
}

/**
 * The request for a (valid) form. Rows are stored per hour and matched by the start of their hour, so the
 * start is moved back to the start of its hour, or a range from 10:30 would lose the 10:00 row; for a user
 * it is not moved past the 30-day limit the server enforces. An empty end is now.
 */
export function toDataFilters(
  form: DataFilterInput,
  admin: boolean,
  now = Math.floor(Date.now() / 1000),
): DataFilters {
  const end = form.end ? fromLocalInput(form.end) : now;
  const asked = fromLocalInput(form.start);
  let start = asked - (asked % 3600);
  if (!admin) start = Math.max(start, end - SELF_MAX_SPAN_SECONDS);
  return { start, end, username: admin ? form.username.trim() : '' };
}
