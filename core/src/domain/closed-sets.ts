/**
 * The closed sets every layer shares, the console included: each declared once, here, as plain values with no
 * imports, so the console's bundle can take this file without pulling server code. The modules that give these
 * values behaviour (users, tokens, logs, redemptions) re-export them; the channel status is imported from here.
 */

/** User roles; anything at or above Admin counts as an admin, Root is the one super administrator. */
export const Role = { Guest: 0, User: 1, Admin: 10, Root: 100 } as const;
export type Role = (typeof Role)[keyof typeof Role];

/** User statuses as stored and on the wire (spec 01: a 3 exists in the reference, shown but never set here). */
export const UserStatus = { Enabled: 1, Disabled: 2 } as const;
export type UserStatus = (typeof UserStatus)[keyof typeof UserStatus];

/** Kinds of log rows; the console filters by these numbers. */
export const LogType = { Unknown: 0, TopUp: 1, Consume: 2, Manage: 3, System: 4, Error: 5 } as const;
export type LogType = (typeof LogType)[keyof typeof LogType];

/** Token statuses; expired and exhausted are set by the system when a limit is reached. */
export const TokenStatus = { Enabled: 1, Disabled: 2, Expired: 3, Exhausted: 4 } as const;
export type TokenStatus = (typeof TokenStatus)[keyof typeof TokenStatus];

/** Redemption code statuses: a used code never changes again. */
export const RedemptionStatus = { Unused: 1, Disabled: 2, Used: 3 } as const;
export type RedemptionStatus = (typeof RedemptionStatus)[keyof typeof RedemptionStatus];

/**
 * Channel statuses as stored in `channels.status` and on the wire (the reference's names): an admin turns a channel
 * off by hand (2); the relay or a balance check turns it off when it fails (3), and only those come back on their own.
 */
export const ChannelStatus = { Enabled: 1, ManuallyDisabled: 2, AutoDisabled: 3 } as const;
export type ChannelStatus = (typeof ChannelStatus)[keyof typeof ChannelStatus];

/** What a quota window counts (docs/adr/0043): quota units, or requests. */
export const QUOTA_WINDOW_UNITS = ['quota', 'requests'] as const;

/** A quota window's calendar periods, in the configured time zone; the other period is `rolling` (the last N hours). */
export const CALENDAR_PERIODS = ['day', 'week', 'month'] as const;

/** Longest rolling quota window: 31 days. */
export const MAX_ROLLING_HOURS = 744;

/** Who made an administrative change (docs/adr/0045): a console session, a user's access token, the operator. */
export const AuditActorType = { User: 'user', Token: 'token', Operator: 'operator' } as const;
export type AuditActorType = (typeof AuditActorType)[keyof typeof AuditActorType];

/** What an administrative change changed; `other` is a route no one has described yet. */
export const AuditKind = {
  Channel: 'channel',
  Option: 'option',
  User: 'user',
  Redemption: 'redemption',
  Log: 'log',
  Token: 'token',
  Plan: 'plan',
  Other: 'other',
} as const;
export type AuditKind = (typeof AuditKind)[keyof typeof AuditKind];

/** Whether the change was made, or refused (by a rule, a missing row) or failed (an error of the gateway). */
export const AuditOutcome = { Ok: 'ok', Refused: 'refused', Failed: 'failed' } as const;
export type AuditOutcome = (typeof AuditOutcome)[keyof typeof AuditOutcome];

/** How long a subscription plan lasts (docs/adr/0049): so many years, months, days or hours, or `custom` seconds. */
export const PLAN_DURATION_UNITS = ['year', 'month', 'day', 'hour', 'custom'] as const;
export type PlanDurationUnit = (typeof PLAN_DURATION_UNITS)[number];

/** When a plan's allowance starts again: never (once for the whole term), each day, week, month, or every N seconds. */
export const PLAN_RESET_PERIODS = ['never', 'daily', 'weekly', 'monthly', 'custom'] as const;
export type PlanResetPeriod = (typeof PLAN_RESET_PERIODS)[number];

/** A user's subscription: running, past its end, or ended early by an administrator. */
export const SubscriptionStatus = { Active: 'active', Expired: 'expired', Cancelled: 'cancelled' } as const;
export type SubscriptionStatus = (typeof SubscriptionStatus)[keyof typeof SubscriptionStatus];

/** An order for a plan: waiting for the payment, paid (the subscription made), or ended unpaid. */
export const PlanOrderStatus = { Pending: 'pending', Success: 'success', Expired: 'expired' } as const;
export type PlanOrderStatus = (typeof PlanOrderStatus)[keyof typeof PlanOrderStatus];
