import { and, gte, lt, or, sql } from 'drizzle-orm';
import {
  bucketSeconds,
  countedSpan,
  type QuotaWindow,
  type Span,
  type WindowOwner,
  windowKey,
} from '../billing/quota-windows.ts';
import type { Executor } from '../db/client.ts';
import { quotaWindowUsage } from '../db/schema/index.ts';

/** A window as a person reads it: its limit, what it has spent (written calls), and when it frees up. */
export interface WindowState {
  readonly window: QuotaWindow;
  readonly key: string;
  readonly used: number;
  readonly left: number;
  /** Unix second a calendar window resets, or a rolling window's oldest counted bucket leaves it. */
  readonly resetAt: number;
}

/** What windows have spent, from `quota_window_usage` (docs/adr/0043). */
export function createQuotaWindowRepo(db: Executor) {
  /** The sum of each key's slots that start inside its span. */
  async function spentIn(spans: ReadonlyMap<string, Span>): Promise<Map<string, number>> {
    const spent = new Map<string, number>();
    if (spans.size === 0) return spent;
    const rows = await db
      .select({ key: quotaWindowUsage.windowKey, amount: sql<string>`sum(${quotaWindowUsage.amount})` })
      .from(quotaWindowUsage)
      .where(
        or(
          ...[...spans].map(([key, span]) =>
            and(
              sql`${quotaWindowUsage.windowKey} = ${key}`,
              gte(quotaWindowUsage.slotStart, span.start),
              lt(quotaWindowUsage.slotStart, span.end),
            ),
          ),
        ),
      )
      .groupBy(quotaWindowUsage.windowKey);
    for (const row of rows) spent.set(row.key, Number(row.amount));
    return spent;
  }

  return {
    spentIn,

    /** The state of an owner's windows at `now` (Unix seconds), for the console and `/api`. */
    async statesOf(
      owner: WindowOwner,
      windows: readonly QuotaWindow[],
      now: number,
      timeZone: string,
    ): Promise<WindowState[]> {
      const spans = new Map<string, Span>();
      for (const window of windows) spans.set(windowKey(owner, window), countedSpan(window, now, timeZone));
      const spent = await spentIn(spans);
      return windows.map((window) => {
        const key = windowKey(owner, window);
        const used = spent.get(key) ?? 0;
        const span = spans.get(key) as Span;
        // A rolling window frees its oldest bucket first.
        const resetAt =
          window.period === 'rolling' ? span.start + bucketSeconds(window.hours as number) : span.end;
        return { window, key, used, left: Math.max(0, window.limit - used), resetAt };
      });
    },
  };
}

export type QuotaWindowRepo = ReturnType<typeof createQuotaWindowRepo>;
