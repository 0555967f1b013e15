/**
 * The time arithmetic of subscription plans (docs/adr/0049): when a subscription bought now ends, and which period
 * of its allowance a moment falls in. An allowance is kept like a quota window (docs/adr/0043): what it spent in a
 * period is the `quota_window_usage` row of its key and the period's start, and the ledger holds calls on it as on a
 * window slot, so a period that ends frees the whole allowance again without any job running.
 */
import { calendarPeriod, type Span } from '../billing/quota-windows.ts';
import type { PlanDurationUnit, PlanResetPeriod } from '../domain/closed-sets.ts';

/** The terms of a plan that decide how long a subscription lasts. */
export interface PlanDuration {
  readonly durationUnit: PlanDurationUnit;
  readonly durationValue: number;
  readonly customSeconds: number;
}

/**
 * When a subscription starting at `start` (Unix seconds) ends: calendar years and months in UTC (a month from
 * 31 January ends on 3 March, as a calendar adds), days and hours as 86,400 and 3,600 seconds.
 */
export function subscriptionEnd(start: number, plan: PlanDuration): number {
  const at = new Date(start * 1000);
  switch (plan.durationUnit) {
    case 'year':
      at.setUTCFullYear(at.getUTCFullYear() + plan.durationValue);
      return Math.floor(at.getTime() / 1000);
    case 'month':
      at.setUTCMonth(at.getUTCMonth() + plan.durationValue);
      return Math.floor(at.getTime() / 1000);
    case 'day':
      return start + plan.durationValue * 86_400;
    case 'hour':
      return start + plan.durationValue * 3_600;
    case 'custom':
      return start + plan.customSeconds;
  }
}

/** The allowance terms a subscription carries (copied from its plan when bought). */
export interface AllowanceTerms {
  readonly id: number;
  readonly amountTotal: number;
  readonly quotaResetPeriod: PlanResetPeriod;
  readonly quotaResetCustomSeconds: number;
  readonly startTime: number;
  readonly endTime: number;
}

/** Stands for "no limit" (`total_amount` 0): far above any balance, exact in a double (Redis scripts). */
export const UNLIMITED_ALLOWANCE = 2 ** 50;

const PERIOD_NAMES: Readonly<Record<PlanResetPeriod, string>> = {
  never: 'term',
  daily: 'day',
  weekly: 'week',
  monthly: 'month',
  custom: 'custom',
};

/**
 * The key an allowance's spending is kept under in `quota_window_usage` (beside the windows' `t:`, `u:`, `g:`):
 * `p:<subscription id>|quota:<period>`.
 */
export function allowanceKey(terms: Pick<AllowanceTerms, 'id' | 'quotaResetPeriod'>): string {
  return `p:${terms.id}|quota:${PERIOD_NAMES[terms.quotaResetPeriod]}`;
}

/**
 * The allowance period holding `at`: the whole term for `never`; a calendar day, week (from Monday) or month in
 * `timeZone`, cut to the term; every `quota_reset_custom_seconds` from the start for `custom`.
 */
export function allowancePeriod(terms: AllowanceTerms, at: number, timeZone: string): Span {
  const term = { start: terms.startTime, end: terms.endTime };
  switch (terms.quotaResetPeriod) {
    case 'never':
      return term;
    case 'custom': {
      const size = Math.max(1, terms.quotaResetCustomSeconds);
      const start = terms.startTime + Math.floor((at - terms.startTime) / size) * size;
      return { start, end: Math.min(start + size, terms.endTime) };
    }
    default: {
      const period = calendarPeriod(
        terms.quotaResetPeriod === 'daily' ? 'day' : terms.quotaResetPeriod === 'weekly' ? 'week' : 'month',
        at,
        timeZone,
      );
      return { start: Math.max(period.start, term.start), end: Math.min(period.end, term.end) };
    }
  }
}

/** The quota the allowance holds per period (`total_amount` 0: no limit). */
export const allowanceLimit = (terms: Pick<AllowanceTerms, 'amountTotal'>): number =>
  terms.amountTotal > 0 ? terms.amountTotal : UNLIMITED_ALLOWANCE;

/** Whether the subscription covers moment `at` (its start included, its end not). */
export const isRunning = (terms: Pick<AllowanceTerms, 'startTime' | 'endTime'>, at: number): boolean =>
  terms.startTime <= at && at < terms.endTime;
