import { and, gte, lt, or, sql } from 'drizzle-orm';
import {
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
  /**
   * Unix second a calendar window resets, or a rolling window's oldest spending stops counting (`left` grows by
   * it then); a rolling window that has spent nothing names the moment its oldest bucket leaves.
   */
  readonly resetAt: number;
}

/** What windows have spent, from `quota_window_usage` (docs/adr/0043). */
export function createQuotaWindowRepo(db: Executor) {
  /** Each key's sum over its slots that start inside its span, and the first of those slots that spent. */
  async function usageIn(
    spans: ReadonlyMap<string, Span>,
  ): Promise<Map<string, { spent: number; firstSpent: number | null }>> {
    const usage = new Map<string, { spent: number; firstSpent: number | null }>();
    if (spans.size === 0) return usage;
    const rows = await db
      .select({
        key: quotaWindowUsage.windowKey,
        amount: sql<string>`sum(${quotaWindowUsage.amount})`,
        firstSpent: sql<
          string | null
        >`min(${quotaWindowUsage.slotStart}) filter (where ${quotaWindowUsage.amount} > 0)`,
      })
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
    for (const row of rows)
      usage.set(row.key, {
        spent: Number(row.amount),
        firstSpent: row.firstSpent === null ? null : Number(row.firstSpent),
      });
    return usage;
  }

  return {
    /** The sum of each key's slots that start inside its span. */
    async spentIn(spans: ReadonlyMap<string, Span>): Promise<Map<string, number>> {
      return new Map([...(await usageIn(spans))].map(([key, { spent }]) => [key, spent]));
    },

    /** The state of an owner's windows at `now` (Unix seconds), for the console and `/api`. */
    async statesOf(
      owner: WindowOwner,
      windows: readonly QuotaWindow[],
      now: number,
      timeZone: string,
    ): Promise<WindowState[]> {
      const spans = new Map<string, Span>();
      for (const window of windows) spans.set(windowKey(owner, window), countedSpan(window, now, timeZone));
      const usage = await usageIn(spans);
      return windows.map((window) => {
        const key = windowKey(owner, window);
        const { spent: used, firstSpent } = usage.get(key) ?? { spent: 0, firstSpent: null };
        const span = spans.get(key) as Span;
        // A rolling window frees its oldest spending first: the bucket it fell in stops counting `hours` after
        // the bucket starts. With nothing spent, the next moment its oldest bucket leaves.
        const resetAt =
          window.period === 'rolling' && firstSpent !== null
            ? firstSpent + (window.hours as number) * 3600
            : span.end;
        return { window, key, used, left: Math.max(0, window.limit - used), resetAt };
      });
    },
  };
}

export type QuotaWindowRepo = ReturnType<typeof createQuotaWindowRepo>;
