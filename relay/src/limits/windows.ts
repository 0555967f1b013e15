/**
 * Quota windows at admission (docs/adr/0043): which windows a call is held in (the token's, the user's, and those
 * of the user's group, each user their own), as the ledger's claims at the window clock, and the 429 a window's
 * refusal is answered with. The check and the hold are the ledger's (core/src/billing/ledger.ts), in the same step
 * as the balances; nothing here reads the database.
 */

import { heldOn, type WindowClaim, type WindowRefusal } from '@turnpike/core/billing/ledger';
import {
  type CalendarPeriod,
  calendarPeriod,
  type QuotaWindow,
  ROLLING_BUCKETS,
  type Span,
  slotOf,
  type WindowOwner,
  windowKey,
  windowName,
} from '@turnpike/core/billing/quota-windows';
import type { OptionStore } from '@turnpike/core/options/store';
import type { RelayError } from '../contract.ts';
import { localError } from '../errors.ts';

/** One of the caller's windows and whose it is. */
export interface CallerWindow {
  readonly owner: WindowOwner;
  readonly window: QuotaWindow;
}

/** A window as one call is held in it: the ledger's claim, whose it is, and when its slot ends. */
export interface WindowCheck extends WindowClaim {
  readonly owner: WindowOwner;
  readonly window: QuotaWindow;
  /** Unix second the slot ends: a calendar window's reset, a rolling window's current bucket's end. */
  readonly end: number;
}

const NONE: readonly never[] = Object.freeze([]);

/**
 * The windows a caller's calls are held in; the same empty list, built from nothing, for the callers that have
 * none (most), so they cost nothing. `withToken` is false where no token pays (the console playground).
 */
export function callerWindows(
  options: OptionStore,
  caller: {
    readonly user: {
      readonly id: number;
      readonly group: string;
      readonly quotaWindows?: readonly QuotaWindow[];
    };
    readonly token: { readonly id: number; readonly quotaWindows?: readonly QuotaWindow[] };
  },
  withToken: boolean,
): readonly CallerWindow[] {
  const { user, token } = caller;
  const tokenWindows = (withToken && token.quotaWindows) || NONE;
  const userWindows = user.quotaWindows ?? NONE;
  const groupWindows = options.get('GroupQuotaWindows')[user.group] ?? NONE;
  if (tokenWindows.length === 0 && userWindows.length === 0 && groupWindows.length === 0) return NONE;
  const tokenOwner: WindowOwner = { kind: 'token', id: token.id };
  const userOwner: WindowOwner = { kind: 'user', id: user.id };
  const groupOwner: WindowOwner = { kind: 'group', group: user.group, userId: user.id };
  return [
    ...tokenWindows.map((window) => ({ owner: tokenOwner, window })),
    ...userWindows.map((window) => ({ owner: userOwner, window })),
    ...groupWindows.map((window) => ({ owner: groupOwner, window })),
  ];
}

/** The calendar periods last computed, per period and zone: the same for every call until the period ends. */
const periods = new Map<string, Span>();

function periodAt(period: CalendarPeriod, at: number, timeZone: string): Span {
  const name = `${period}\u0000${timeZone}`;
  const known = periods.get(name);
  if (known && known.start <= at && at < known.end) return known;
  const span = calendarPeriod(period, at, timeZone);
  periods.set(name, span);
  return span;
}

/** The claims of `windows` at `now` (Unix seconds): calendar periods in `timeZone`, rolling buckets since the epoch. */
export function windowChecks(windows: readonly CallerWindow[], now: number, timeZone: string): WindowCheck[] {
  return windows.map(({ owner, window }) => {
    const key = windowKey(owner, window);
    if (window.period === 'rolling') {
      const bucket = slotOf(window, now, timeZone);
      const limits = { limit: window.limit, unit: window.unit };
      const step = bucket.end - bucket.start;
      return {
        key,
        slot: bucket.start,
        step,
        slots: ROLLING_BUCKETS,
        ...limits,
        owner,
        window,
        end: bucket.end,
      };
    }
    const span = periodAt(window.period, now, timeZone);
    return {
      key,
      slot: span.start,
      step: 0,
      slots: 1,
      limit: window.limit,
      unit: window.unit,
      owner,
      window,
      end: span.end,
    };
  });
}

/** `token`, `user`, `group:vip`: whose window, in the `x-turnpike-window` header. */
function ownerLabel(owner: WindowOwner): string {
  return owner.kind === 'group' ? `group:${owner.group}` : owner.kind;
}

const PERIOD_WORDS: Readonly<Record<CalendarPeriod, string>> = {
  day: 'daily',
  week: 'weekly',
  month: 'monthly',
};

/** "the token's daily quota window", "the 5-hour request window of the group vip (each user's own)". */
export function describeWindow(check: Pick<WindowCheck, 'owner' | 'window'>): string {
  const { owner, window } = check;
  const length = window.period === 'rolling' ? `${window.hours}-hour` : PERIOD_WORDS[window.period];
  const what = `${length} ${window.unit === 'requests' ? 'request' : 'quota'} window`;
  if (owner.kind === 'group') return `the ${what} of the group ${owner.group} (each user's own)`;
  return `the ${owner.kind}'s ${what}`;
}

/** RFC 3339 to the second, in UTC. */
const rfc3339 = (seconds: number): string => new Date(seconds * 1000).toISOString().replace(/\.\d+Z$/, 'Z');

/** When a refused window can take the call, as far as the ledger can tell: its reset, or its oldest buckets leaving. */
function freesAt(check: WindowCheck, refusal: WindowRefusal): number {
  if (check.step === 0) return check.end;
  return refusal.freeAt ?? check.slot + check.slots * check.step;
}

/**
 * The 429 of a call a window refused, in words that say which window, what it has left and when it frees, with the
 * headers that say the same: `x-turnpike-window` (`token quota:day`), `-limit`, `-remaining` and `-reset` (RFC
 * 3339), and `Retry-After` until then.
 */
export function windowRefusal(
  check: WindowCheck,
  refusal: WindowRefusal,
  amount: number,
  now: number,
): { readonly error: RelayError; readonly headers: Readonly<Record<string, string>> } {
  const at = freesAt(check, refusal);
  const isRequests = check.unit === 'requests';
  const need = isRequests ? 1 : amount;
  const name = describeWindow(check);
  const when = check.step === 0 ? `it resets at ${rfc3339(at)}` : `room frees from ${rfc3339(at)}`;
  const message =
    need > check.limit
      ? `this call may cost up to ${need}, more than ${name} allows in all (${check.limit}); lower max_tokens`
      : isRequests
        ? `${name} is used up (${check.limit} requests); ${when}`
        : `${name} cannot cover this call (it may cost up to ${need}; ${refusal.available} of ${check.limit} left); ${when}`;
  const retryAfterSeconds = Math.max(1, at - now);
  return {
    error: { ...localError(429, 'quota_window_exceeded', message, 'rate_limit_error'), retryAfterSeconds },
    headers: {
      'x-turnpike-window': `${ownerLabel(check.owner)} ${windowName(check.window)}`,
      'x-turnpike-window-limit': String(check.limit),
      'x-turnpike-window-remaining': String(refusal.available),
      'x-turnpike-window-reset': rfc3339(at),
    },
  };
}

/** The check a refusal names (the ledger answers with the claim it was given). */
export const checkOf = (checks: readonly WindowCheck[], refusal: WindowRefusal): WindowCheck =>
  checks.find((check) => heldOn(check) === heldOn(refusal.claim)) as WindowCheck;
