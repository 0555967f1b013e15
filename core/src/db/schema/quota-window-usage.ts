import { bigint, index, pgTable, primaryKey, varchar } from 'drizzle-orm/pg-core';

/**
 * What each quota window has spent (docs/adr/0043), one row per window and slot: the calendar period (day, week,
 * month) or the rolling window's bucket the spending fell in. Written by the batching writer in the transaction
 * that writes the calls' debits and logs, so a window's spending and the balances never disagree; `version` is
 * bumped by every write, as `users.ledger_version` is, so the shared ledger can order what it read against them.
 */
export const quotaWindowUsage = pgTable(
  'quota_window_usage',
  {
    /** `windowKey()` of core/src/billing/quota-windows.ts: `t:12|quota:day`, `g:vip:5|quota:5h`. */
    windowKey: varchar('window_key', { length: 160 }).notNull(),
    /** Unix second the period or bucket starts at. */
    slotStart: bigint('slot_start', { mode: 'number' }).notNull(),
    /** Quota units, or requests for a `requests` window. */
    amount: bigint('amount', { mode: 'number' }).notNull().default(0),
    version: bigint('version', { mode: 'number' }).notNull().default(0),
  },
  (t) => [
    primaryKey({ columns: [t.windowKey, t.slotStart] }),
    index('idx_quota_window_usage_slot').on(t.slotStart),
  ],
);

export type QuotaWindowUsage = typeof quotaWindowUsage.$inferSelect;
