/**
 * Quota windows in the console (issue 39, docs/adr/0043): budgets that reset, on tokens, users and groups. A
 * quota window's limit is typed as the site shows quota (dollars when `DisplayInCurrencyEnabled`, else units); a
 * requests window's as a count. The shapes and bounds are core's, so the console and the server agree.
 */
import type { QuotaWindow, QuotaWindowUnit } from '@turnpike/core/billing/quota-windows';
import type { QuotaWindowStateView } from '@turnpike/core/contracts/quota-windows';
import { CALENDAR_PERIODS, MAX_ROLLING_HOURS } from '@turnpike/core/domain/closed-sets';
import { DEFAULT_QUOTA_PER_UNIT, formatNumber, formatQuota, type QuotaDisplay } from '../../lib/format.ts';
import { parseObject } from '../settings/group-limits.ts';

export type { QuotaWindow, QuotaWindowStateView };

/** The periods the editor offers: the calendar ones, then the last N hours. */
export const WINDOW_PERIODS = [...CALENDAR_PERIODS, 'rolling'] as const;
export type WindowPeriod = (typeof WINDOW_PERIODS)[number];

/** The server keeps at most this many windows per token, user or group. */
export const MAX_WINDOWS = 8;

/** One window as the editor holds it, typed. */
export interface WindowRow {
  unit: QuotaWindowUnit;
  period: WindowPeriod;
  hours: string;
  limit: string;
  /** The stored limit and the text it was shown as: an untouched limit is sent back exactly. */
  stored?: { text: string; limit: number };
}

export type WindowError = 'limitPositive' | 'limitWhole' | 'hoursRange' | 'duplicate';

/** The message key of each error (namespace `quota-windows`). */
export const WINDOW_ERROR_KEYS: Readonly<Record<WindowError, string>> = {
  limitPositive: 'error.limitPositive',
  limitWhole: 'error.limitWhole',
  hoursRange: 'error.hoursRange',
  duplicate: 'error.duplicate',
};

/** Two windows of the same unit and period (and hours) would be one window counted twice. */
const sameWindow = (w: QuotaWindow) => `${w.unit}|${w.period}|${w.hours ?? ''}`;

const perUnit = (display: QuotaDisplay) =>
  display.quotaPerUnit && display.quotaPerUnit > 0 ? display.quotaPerUnit : DEFAULT_QUOTA_PER_UNIT;

/** Whether a quota limit is typed in dollars (the site shows money) or in quota units. */
export const isTypedInMoney = (display: QuotaDisplay) => display.inCurrency !== false;

/** A stored limit as the editor shows it. */
export function limitText(window: Pick<QuotaWindow, 'unit' | 'limit'>, display: QuotaDisplay): string {
  if (window.unit === 'requests' || !isTypedInMoney(display)) return String(window.limit);
  return String(Number((window.limit / perUnit(display)).toFixed(6)));
}

/** The editor's rows of stored windows. */
export function windowRowsOf(
  windows: readonly QuotaWindow[] | undefined,
  display: QuotaDisplay,
): WindowRow[] {
  return (windows ?? []).map((w) => {
    const text = limitText(w, display);
    return {
      unit: w.unit,
      period: w.period,
      hours: w.hours === undefined ? '' : String(w.hours),
      limit: text,
      stored: { text, limit: w.limit },
    };
  });
}

/** A new row: $5 (or 5 units' worth) a day. */
export function newWindowRow(display: QuotaDisplay): WindowRow {
  return {
    unit: 'quota',
    period: 'day',
    hours: '5',
    limit: isTypedInMoney(display) ? '5' : String(perUnit(display) * 5),
  };
}

function parseLimit(row: WindowRow, display: QuotaDisplay): number | WindowError {
  const text = row.limit.trim();
  if (row.stored && text === row.stored.text) return row.stored.limit;
  const n = Number(text);
  if (text === '' || !Number.isFinite(n) || n <= 0) return 'limitPositive';
  if (row.unit === 'quota' && isTypedInMoney(display)) {
    const quota = Math.round(n * perUnit(display));
    return quota > 0 && Number.isSafeInteger(quota) ? quota : 'limitPositive';
  }
  return Number.isSafeInteger(n) ? n : 'limitWhole';
}

/** The windows to send, or the first row and field that is wrong. */
export function parseWindowRows(
  rows: readonly WindowRow[],
  display: QuotaDisplay,
):
  | { ok: true; windows: QuotaWindow[] }
  | { ok: false; index: number; field: 'limit' | 'hours'; error: WindowError } {
  const windows: QuotaWindow[] = [];
  const names = new Set<string>();
  for (const [index, row] of rows.entries()) {
    let hours: number | undefined;
    if (row.period === 'rolling') {
      const text = row.hours.trim();
      hours = Number(text);
      if (!/^\d+$/.test(text) || hours < 1 || hours > MAX_ROLLING_HOURS)
        return { ok: false, index, field: 'hours', error: 'hoursRange' };
    }
    const limit = parseLimit(row, display);
    if (typeof limit === 'string') return { ok: false, index, field: 'limit', error: limit };
    const window: QuotaWindow = { unit: row.unit, limit, period: row.period, ...(hours ? { hours } : {}) };
    const name = sameWindow(window);
    if (names.has(name)) return { ok: false, index, field: 'limit', error: 'duplicate' };
    names.add(name);
    windows.push(window);
  }
  return { ok: true, windows };
}

/** The state the server answered for a stored window (matched by unit and period), if any. */
export function stateOf(
  row: Pick<WindowRow, 'unit' | 'period' | 'hours'>,
  states: readonly QuotaWindowStateView[] | undefined,
): QuotaWindowStateView | undefined {
  return states?.find(
    (s) =>
      s.unit === row.unit &&
      s.period === row.period &&
      (s.period !== 'rolling' || String(s.hours) === row.hours.trim()),
  );
}

/** An amount of a window's unit as the site shows it: money or quota units, or a number of requests. */
export function windowAmount(unit: QuotaWindowUnit, amount: number, display: QuotaDisplay): string {
  return unit === 'quota' ? formatQuota(amount, display) : formatNumber(amount);
}

/** How full a window is, 0 to 1 (a window spent past its limit is full). */
export const fillOf = (state: Pick<QuotaWindowStateView, 'used' | 'limit'>) =>
  state.limit > 0 ? Math.min(1, state.used / state.limit) : 1;

const pad = (n: number) => String(n).padStart(2, '0');

/** When a window resets, in the reader's local time: `HH:mm` within a day from `now` (ms), else the date too. */
export function resetText(resetAt: number, now: number = Date.now()): string {
  const d = new Date(resetAt * 1000);
  const time = `${pad(d.getHours())}:${pad(d.getMinutes())}`;
  if (resetAt * 1000 - now < 86_400_000) return time;
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${time}`;
}

/** The groups with windows (`GroupQuotaWindows`), in name order, as editor rows. */
export function groupWindowRows(
  values: Readonly<Record<string, string>>,
  display: QuotaDisplay,
): [string, WindowRow[]][] {
  const stored = parseObject(values.GroupQuotaWindows) as Record<string, QuotaWindow[]>;
  return Object.keys(stored)
    .sort()
    .map((group) => [group, windowRowsOf(Array.isArray(stored[group]) ? stored[group] : [], display)]);
}

/** The groups a window may be added for: those the prices know (`GroupRatio`) without windows yet. */
export function groupsWithoutWindows(
  values: Readonly<Record<string, string>>,
  withWindows: readonly string[],
): string[] {
  return Object.keys(parseObject(values.GroupRatio))
    .filter((group) => !withWindows.includes(group))
    .sort();
}

/** `GroupQuotaWindows` as saved (a group left without windows has no entry), or the first wrong field. */
export function groupWindowsOption(
  groups: readonly (readonly [string, readonly WindowRow[]])[],
  display: QuotaDisplay,
):
  | { ok: true; text: string }
  | { ok: false; group: string; index: number; field: 'limit' | 'hours'; error: WindowError } {
  const option: Record<string, QuotaWindow[]> = {};
  for (const [group, rows] of groups) {
    const parsed = parseWindowRows(rows, display);
    if (!parsed.ok) return { ...parsed, group };
    if (parsed.windows.length > 0) option[group] = parsed.windows;
  }
  return { ok: true, text: JSON.stringify(option) };
}

/** Whether an option's stored JSON text says the same as `text`, however it is spaced. */
export const sameJson = (stored: string | undefined, text: string) =>
  JSON.stringify(parseObject(stored)) === JSON.stringify(parseObject(text));

/**
 * Whether an edit changed the windows: an edit that did not leaves them out, so it never undoes another's. Compared
 * by what they say, not their JSON (the database answers an object's keys in an order of its own).
 */
export function windowsChanged(
  before: readonly QuotaWindow[] | undefined,
  after: readonly QuotaWindow[],
): boolean {
  const said = (list: readonly QuotaWindow[]) => list.map((w) => `${sameWindow(w)}=${w.limit}`).join(',');
  return said(before ?? []) !== said(after);
}
