/**
 * Quota windows (issue 39, docs/adr/0043): budgets that reset. A token, a user, or every user of a group may have
 * several windows at once ("$5 a day and $100 a month", "200 requests a day", "$20 in any 5 hours"), each either
 * a calendar window (day, week from Monday, month, in the configured time zone `QuotaWindowTimeZone`) or a
 * rolling one (the last N hours), counting quota or requests.
 *
 * This file holds the pure parts every role shares: the stored shape (the `quota_windows` columns of tokens and
 * users, the `GroupQuotaWindows` option), the key a window's spending is kept under (`quota_window_usage`), and
 * the time arithmetic (which period or bucket a moment falls in, when a window resets).
 */
import { z } from 'zod';
import { CALENDAR_PERIODS, MAX_ROLLING_HOURS, QUOTA_WINDOW_UNITS } from '../domain/closed-sets.ts';

// The closed sets are declared with the others the console takes (a file without zod, so its bundle stays small).
export { CALENDAR_PERIODS, MAX_ROLLING_HOURS, QUOTA_WINDOW_UNITS };
export type QuotaWindowUnit = (typeof QUOTA_WINDOW_UNITS)[number];
export type CalendarPeriod = (typeof CALENDAR_PERIODS)[number];

/** A rolling window is kept in this many buckets; the oldest bucket counts whole (never admits over the limit). */
export const ROLLING_BUCKETS = 60;

/**
 * One window: `limit` quota units (or requests) per `period`, where `period` is `day`, `week`, `month` or
 * `rolling` with `hours`.
 */
export const quotaWindowSchema = z
  .strictObject({
    unit: z.enum(QUOTA_WINDOW_UNITS, { error: 'unit must be "quota" or "requests"' }),
    limit: z
      .number({ error: 'limit must be a number' })
      .int('limit must be a whole number')
      .positive('limit must be more than 0'),
    period: z.enum([...CALENDAR_PERIODS, 'rolling'], {
      error: 'period must be "day", "week", "month" or "rolling"',
    }),
    hours: z
      .number({ error: 'hours must be a number' })
      .int('hours must be a whole number')
      .min(1, 'hours must be 1 or more')
      .max(MAX_ROLLING_HOURS, `hours must be ${MAX_ROLLING_HOURS} or fewer`)
      .optional(),
  })
  .refine((w) => (w.period === 'rolling') === (w.hours !== undefined), {
    message: 'a rolling window needs "hours", and only a rolling window has them',
  });
export type QuotaWindow = z.infer<typeof quotaWindowSchema>;

/** A list of windows; two windows of the same unit and period would be one window counted twice. */
export const quotaWindowsSchema = z
  .array(quotaWindowSchema)
  .max(8, 'at most 8 windows')
  .refine((list) => new Set(list.map(windowName)).size === list.length, {
    message: 'two windows have the same unit and period',
  });
export type QuotaWindows = z.infer<typeof quotaWindowsSchema>;

/** `GroupQuotaWindows`: group -> the windows every user of that group has (each user their own). */
export const groupQuotaWindowsSchema = z.record(z.string().trim().min(1), quotaWindowsSchema);
export type GroupQuotaWindows = z.infer<typeof groupQuotaWindowsSchema>;

/** A window's name within its owner: `quota:day`, `requests:month`, `quota:5h`. */
export function windowName(window: Pick<QuotaWindow, 'unit' | 'period' | 'hours'>): string {
  return `${window.unit}:${window.period === 'rolling' ? `${window.hours}h` : window.period}`;
}

/** Whose window it is: a token's, a user's own, or a group's as it applies to one user. */
export type WindowOwner =
  | { readonly kind: 'token'; readonly id: number }
  | { readonly kind: 'user'; readonly id: number }
  | { readonly kind: 'group'; readonly group: string; readonly userId: number };

/**
 * The key a window's spending is kept under in `quota_window_usage` (and in the ledger): `t:12|quota:day`,
 * `u:5|requests:day`, `g:vip:5|quota:5h`. Changing a window's limit keeps its key (and what it has spent).
 */
export function windowKey(
  owner: WindowOwner,
  window: Pick<QuotaWindow, 'unit' | 'period' | 'hours'>,
): string {
  const who =
    owner.kind === 'token'
      ? `t:${owner.id}`
      : owner.kind === 'user'
        ? `u:${owner.id}`
        : `g:${owner.group}:${owner.userId}`;
  return `${who}|${windowName(window)}`;
}

/** Seconds a rolling window's bucket spans. */
export function bucketSeconds(hours: number): number {
  return (hours * 3600) / ROLLING_BUCKETS;
}

/** A span of time in Unix seconds, `[start, end)`. */
export interface Span {
  readonly start: number;
  readonly end: number;
}

/**
 * The slot a moment's spending is kept in: for a calendar window the period it falls in (its reset is `end`), for
 * a rolling window the bucket it falls in (buckets start at multiples of the bucket length since the epoch).
 */
export function slotOf(window: QuotaWindow, at: number, timeZone: string): Span {
  if (window.period === 'rolling') {
    const size = bucketSeconds(window.hours as number);
    const start = Math.floor(at / size) * size;
    return { start, end: start + size };
  }
  return calendarPeriod(window.period, at, timeZone);
}

/**
 * The slots a window counts at moment `at`: the one period of a calendar window; for a rolling window every
 * bucket that overlaps the last `hours` (the oldest counted whole), as `[first bucket start, now's bucket end)`.
 */
export function countedSpan(window: QuotaWindow, at: number, timeZone: string): Span {
  if (window.period !== 'rolling') return calendarPeriod(window.period, at, timeZone);
  const size = bucketSeconds(window.hours as number);
  const current = Math.floor(at / size) * size;
  return { start: current - (ROLLING_BUCKETS - 1) * size, end: current + size };
}

/** The calendar day, ISO week (from Monday) or month holding `at` in `timeZone`, as Unix seconds. */
export function calendarPeriod(period: CalendarPeriod, at: number, timeZone: string): Span {
  const { year, month, day, weekday } = localDate(at, timeZone);
  if (period === 'day')
    return {
      start: localMidnight(year, month, day, timeZone),
      end: localMidnight(year, month, day + 1, timeZone),
    };
  if (period === 'week') {
    const back = (weekday + 6) % 7; // Monday 0 … Sunday 6
    return {
      start: localMidnight(year, month, day - back, timeZone),
      end: localMidnight(year, month, day - back + 7, timeZone),
    };
  }
  return { start: localMidnight(year, month, 1, timeZone), end: localMidnight(year, month + 1, 1, timeZone) };
}

// Whether a zone is one this runtime knows: beside the closed sets, so the console checks it without zod.
export { isKnownTimeZone } from '../domain/time-zone.ts';

const formatters = new Map<string, Intl.DateTimeFormat>();
function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (formatter === undefined) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
      weekday: 'short',
    });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

const WEEKDAYS: Readonly<Record<string, number>> = { Sun: 0, Mon: 1, Tue: 2, Wed: 3, Thu: 4, Fri: 5, Sat: 6 };

interface LocalTime {
  readonly year: number;
  readonly month: number;
  readonly day: number;
  readonly hour: number;
  readonly minute: number;
  readonly second: number;
  readonly weekday: number;
}

function localDate(at: number, timeZone: string): LocalTime {
  const parts: Record<string, string> = {};
  for (const part of formatterFor(timeZone).formatToParts(at * 1000)) parts[part.type] = part.value;
  return {
    year: Number(parts.year),
    month: Number(parts.month),
    day: Number(parts.day),
    hour: Number(parts.hour),
    minute: Number(parts.minute),
    second: Number(parts.second),
    weekday: WEEKDAYS[parts.weekday as string] ?? 0,
  };
}

/** The zone's offset from UTC at `at`, in seconds (east positive). */
function offsetAt(at: number, timeZone: string): number {
  const t = localDate(at, timeZone);
  return Date.UTC(t.year, t.month - 1, t.day, t.hour, t.minute, t.second) / 1000 - at;
}

/**
 * The Unix second of local midnight starting the day `year-month-day` (month 1-12; day and month may overflow,
 * as Date.UTC allows). Where a zone skips midnight (a DST change at 00:00), the first moment of that day.
 */
function localMidnight(year: number, month: number, day: number, timeZone: string): number {
  const guess = Date.UTC(year, month - 1, day) / 1000;
  const target = new Date(guess * 1000);
  const isTargetDay = (at: number) => {
    const t = localDate(at, timeZone);
    return (
      t.year === target.getUTCFullYear() &&
      t.month === target.getUTCMonth() + 1 &&
      t.day === target.getUTCDate()
    );
  };
  // The offset at the guess may differ from the offset at local midnight (a change in between): try both, and
  // keep the earliest that falls on the day (after a skipped midnight that is the first moment of the day).
  const first = guess - offsetAt(guess, timeZone);
  const second = guess - offsetAt(first, timeZone);
  const onDay = [first, second].filter(isTargetDay);
  return onDay.length > 0 ? Math.min(...onDay) : first;
}
