/**
 * Quota windows as `/api` reads and answers them (issue 39, docs/adr/0043): the `quota_windows` field of the token
 * and user edits, and the read-only `quota_window_states` beside it.
 */
import { z } from 'zod';
import { type QuotaWindow, type QuotaWindows, quotaWindowsSchema } from '../billing/quota-windows.ts';
import type { WindowState } from '../repos/quota-window.repo.ts';

/**
 * `quota_windows` of a create or an edit: the stored shape, each problem named with the window it is in
 * ("quota_windows, window 2: limit must be more than 0"), so a script sees which entry to fix.
 */
export const quotaWindowsField = z.unknown().transform((value, ctx): QuotaWindows => {
  const parsed = quotaWindowsSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const index = issue?.path[0];
  const where = typeof index === 'number' ? `quota_windows, window ${index + 1}` : 'quota_windows';
  const message =
    issue?.code === 'invalid_type' && issue.path.length === 0
      ? 'must be a list of windows'
      : (issue?.message ?? 'is not valid');
  ctx.addIssue({ code: 'custom', message: `${where}: ${message}` });
  return z.NEVER;
});

/** One window as the console shows it: its shape, what it has spent, what is left, and when it frees up. */
export interface QuotaWindowStateView {
  readonly unit: QuotaWindow['unit'];
  readonly period: QuotaWindow['period'];
  readonly hours?: number;
  readonly limit: number;
  /** Quota units (or requests) the window has counted at the moment of the answer. */
  readonly used: number;
  readonly left: number;
  /** Unix second a calendar window resets, or a rolling window's oldest counted spending leaves it. */
  readonly reset_at: number;
}

export function toQuotaWindowStateView(state: WindowState): QuotaWindowStateView {
  const { unit, period, hours, limit } = state.window;
  return {
    unit,
    period,
    ...(hours === undefined ? {} : { hours }),
    limit,
    used: state.used,
    left: state.left,
    reset_at: state.resetAt,
  };
}

/**
 * What `/api/user/self` and the admin's user sheet add to a user's `quota_windows`: the state of each, and the
 * windows every user of their group has (`GroupQuotaWindows`) with theirs. A call must fit all of them.
 */
export interface UserQuotaWindowsView {
  readonly quota_window_states: QuotaWindowStateView[];
  readonly group_quota_windows: QuotaWindows;
  readonly group_quota_window_states: QuotaWindowStateView[];
}
