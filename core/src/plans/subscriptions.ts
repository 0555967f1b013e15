/**
 * The database steps of subscription plans (docs/adr/0049) every role shares: granting a plan (bought or given),
 * completing an order exactly once, ending subscriptions whose term is over, and reading what an allowance has left.
 * Each step that changes what the relay admits answers the users whose cached rows must be read again; the caller
 * publishes `users.changed` for them once the transaction committed.
 */
import { and, asc, desc, eq, inArray, lte, ne, sql } from 'drizzle-orm';
import { TopUpStatus } from '../contracts/wallet.ts';
import type { Db, Executor } from '../db/client.ts';
import {
  quotaWindowUsage,
  type SubscriptionOrder,
  type SubscriptionPlan,
  subscriptionOrders,
  subscriptionPlans,
  topUps,
  type UserSubscription,
  userSubscriptions,
  users,
} from '../db/schema/index.ts';
import {
  LogType,
  PLAN_RESET_PERIODS,
  PlanOrderStatus,
  type PlanResetPeriod,
  SubscriptionStatus,
} from '../domain/closed-sets.ts';
import { createLogRepo } from '../repos/log.repo.ts';
import {
  type AllowanceTerms,
  allowanceKey,
  allowancePeriod,
  type PlanDuration,
  subscriptionEnd,
} from './periods.ts';

const isResetPeriod = (value: string): value is PlanResetPeriod =>
  (PLAN_RESET_PERIODS as readonly string[]).includes(value);

/** A subscription's allowance terms, as the relay holds calls on them. */
export function termsOf(row: UserSubscription): AllowanceTerms {
  return {
    id: row.id,
    amountTotal: row.amountTotal,
    quotaResetPeriod: isResetPeriod(row.quotaResetPeriod) ? row.quotaResetPeriod : 'never',
    quotaResetCustomSeconds: row.quotaResetCustomSeconds,
    startTime: row.startTime,
    endTime: row.endTime,
  };
}

/**
 * Gives `userId` a subscription of `plan` from `now`, with the plan's allowance terms copied, and moves the user to
 * the plan's group (remembering the one they leave). Run inside the transaction of whatever paid for it.
 */
export async function grantSubscription(
  tx: Executor,
  userId: number,
  plan: SubscriptionPlan,
  source: 'order' | 'admin',
  now: number,
): Promise<UserSubscription> {
  const [user] = await tx.select({ group: users.group }).from(users).where(eq(users.id, userId)).limit(1);
  if (!user) throw new Error(`user ${userId} does not exist`);
  const moves = plan.upgradeGroup !== '' && plan.upgradeGroup !== user.group;
  const [row] = await tx
    .insert(userSubscriptions)
    .values({
      userId,
      planId: plan.id,
      amountTotal: plan.totalAmount,
      quotaResetPeriod: plan.quotaResetPeriod,
      quotaResetCustomSeconds: plan.quotaResetCustomSeconds,
      startTime: now,
      endTime: subscriptionEnd(now, plan as PlanDuration),
      status: SubscriptionStatus.Active,
      source,
      upgradeGroup: plan.upgradeGroup,
      prevUserGroup: moves ? user.group : '',
      createdAt: now,
      updatedAt: now,
    })
    .returning();
  if (moves) await tx.update(users).set({ group: plan.upgradeGroup }).where(eq(users.id, userId));
  return row as UserSubscription;
}

/** What a payment provider reports about a paid order, checked against what the order asked. */
export interface PaymentReport {
  /** Money paid, in `currency`. */
  readonly money: number;
  readonly currency: string;
  readonly providerRef: string;
  readonly payload: string;
}

/** Why a paid report completed nothing. */
export type CompleteRefusal = 'unknown-order' | 'amount-mismatch';

/**
 * Completes a pending order once: checks the money and currency paid against the order, moves it out of `pending`
 * in one conditional statement (of any number of repeated or concurrent callbacks exactly one gets it), and grants
 * the subscription, a top-up record and a log line in the same transaction. A repeated report answers the order
 * without doing anything (`done: false`).
 */
export async function completeOrder(
  db: Db,
  tradeNo: string,
  report: PaymentReport,
  now: number,
): Promise<
  | { readonly ok: true; readonly done: boolean; readonly order: SubscriptionOrder }
  | { readonly ok: false; readonly reason: CompleteRefusal }
> {
  const [order] = await db
    .select()
    .from(subscriptionOrders)
    .where(eq(subscriptionOrders.tradeNo, tradeNo))
    .limit(1);
  if (!order) return { ok: false, reason: 'unknown-order' };
  if (
    Math.abs(report.money - order.money) >= 0.005 ||
    report.currency.toUpperCase() !== order.currency.toUpperCase()
  )
    return { ok: false, reason: 'amount-mismatch' };
  const done = await db.transaction(async (tx) => {
    const [claimed] = await tx
      .update(subscriptionOrders)
      .set({
        status: PlanOrderStatus.Success,
        completeTime: now,
        providerRef: report.providerRef,
        providerPayload: report.payload,
      })
      .where(
        and(eq(subscriptionOrders.tradeNo, tradeNo), eq(subscriptionOrders.status, PlanOrderStatus.Pending)),
      )
      .returning();
    if (!claimed) return undefined;
    const [plan] = await tx
      .select()
      .from(subscriptionPlans)
      .where(eq(subscriptionPlans.id, claimed.planId))
      .limit(1);
    if (!plan) throw new Error(`plan ${claimed.planId} of order ${tradeNo} is gone`);
    const granted = await grantSubscription(tx, claimed.userId, plan, 'order', now);
    await tx
      .update(subscriptionOrders)
      .set({ userSubscriptionId: granted.id })
      .where(eq(subscriptionOrders.id, claimed.id));
    // The wallet's payment history lists plans beside top-ups (amount 0: no quota was added to the wallet).
    await tx.insert(topUps).values({
      userId: claimed.userId,
      amount: 0,
      money: claimed.money,
      tradeNo: claimed.tradeNo,
      paymentMethod: claimed.paymentMethod,
      createTime: claimed.createTime,
      completeTime: now,
      status: TopUpStatus.Success,
    });
    const [user] = await tx
      .select({ username: users.username })
      .from(users)
      .where(eq(users.id, claimed.userId));
    await createLogRepo(tx).insert({
      userId: claimed.userId,
      username: user?.username ?? '',
      type: LogType.TopUp,
      quota: 0,
      content: `plan bought: ${plan.title}, paid ${claimed.money.toFixed(2)} ${claimed.currency} by ${claimed.paymentMethod} (order ${claimed.tradeNo})`,
    });
    return { ...claimed, userSubscriptionId: granted.id };
  });
  return done ? { ok: true, done: true, order: done } : { ok: true, done: false, order };
}

/** Ends a pending order the provider says was never paid; a paid order stays paid. */
export async function expireOrder(db: Executor, tradeNo: string, now: number): Promise<boolean> {
  const rows = await db
    .update(subscriptionOrders)
    .set({ status: PlanOrderStatus.Expired, completeTime: now })
    .where(
      and(eq(subscriptionOrders.tradeNo, tradeNo), eq(subscriptionOrders.status, PlanOrderStatus.Pending)),
    )
    .returning({ id: subscriptionOrders.id });
  return rows.length > 0;
}

/**
 * Moves a subscription out of `active` (expired at its end, or cancelled by an administrator) in one conditional
 * statement, and gives the user back the group the plan moved them from, unless another running subscription
 * still grants that group or the group was changed since. Answers the user when something changed.
 */
async function endSubscription(
  tx: Executor,
  id: number,
  status: typeof SubscriptionStatus.Expired | typeof SubscriptionStatus.Cancelled,
  now: number,
): Promise<number | undefined> {
  const [ended] = await tx
    .update(userSubscriptions)
    .set({
      status,
      updatedAt: now,
      ...(status === SubscriptionStatus.Cancelled
        ? { endTime: sql`least(${userSubscriptions.endTime}, ${now})` }
        : {}),
    })
    .where(and(eq(userSubscriptions.id, id), eq(userSubscriptions.status, SubscriptionStatus.Active)))
    .returning();
  if (!ended) return undefined;
  if (ended.upgradeGroup !== '' && ended.prevUserGroup !== '') {
    const others = await tx
      .select({ id: userSubscriptions.id })
      .from(userSubscriptions)
      .where(
        and(
          eq(userSubscriptions.userId, ended.userId),
          eq(userSubscriptions.status, SubscriptionStatus.Active),
          eq(userSubscriptions.upgradeGroup, ended.upgradeGroup),
          ne(userSubscriptions.id, ended.id),
        ),
      )
      .limit(1);
    if (others.length === 0)
      await tx
        .update(users)
        .set({ group: ended.prevUserGroup })
        .where(and(eq(users.id, ended.userId), eq(users.group, ended.upgradeGroup)));
  }
  return ended.userId;
}

/**
 * Expires every active subscription whose term ended by `now`, each in its own conditional step, so replicas running
 * this at once each end a subscription at most once. Answers the users whose rows changed.
 */
export async function expireSubscriptions(db: Db, now: number): Promise<number[]> {
  const due = await db
    .select({ id: userSubscriptions.id })
    .from(userSubscriptions)
    .where(and(eq(userSubscriptions.status, SubscriptionStatus.Active), lte(userSubscriptions.endTime, now)))
    .orderBy(asc(userSubscriptions.endTime))
    .limit(500);
  const changed = new Set<number>();
  for (const { id } of due) {
    const userId = await db.transaction((tx) => endSubscription(tx, id, SubscriptionStatus.Expired, now));
    if (userId !== undefined) changed.add(userId);
  }
  return [...changed];
}

/** An administrator ends a subscription now; answers its user, or undefined when it was not active. */
export function cancelSubscription(db: Db, id: number, now: number): Promise<number | undefined> {
  return db.transaction((tx) => endSubscription(tx, id, SubscriptionStatus.Cancelled, now));
}

/** A subscription with what its allowance has spent and has left in the period of `now`. */
export interface SubscriptionView {
  readonly subscription: UserSubscription;
  /** Spent in the current period (what the writer has written). */
  readonly amountUsed: number;
  /** When the current period started and the allowance next starts again (0: it does not before the end). */
  readonly lastResetTime: number;
  readonly nextResetTime: number;
}

/** A user's subscriptions, newest end first (`activeOnly`: those running at `now`), with their allowances' use. */
export async function listSubscriptions(
  db: Executor,
  userId: number,
  now: number,
  timeZone: string,
  activeOnly = false,
): Promise<SubscriptionView[]> {
  const rows = await db
    .select()
    .from(userSubscriptions)
    .where(
      activeOnly
        ? and(eq(userSubscriptions.userId, userId), eq(userSubscriptions.status, SubscriptionStatus.Active))
        : eq(userSubscriptions.userId, userId),
    )
    .orderBy(desc(userSubscriptions.endTime), desc(userSubscriptions.id));
  const live = activeOnly ? rows.filter((row) => row.endTime > now) : rows;
  if (live.length === 0) return [];
  const periods = live.map((row) => allowancePeriod(termsOf(row), Math.min(now, row.endTime - 1), timeZone));
  const keys = live.map((row) => allowanceKey(termsOf(row)));
  const usage = await db
    .select({
      key: quotaWindowUsage.windowKey,
      slot: quotaWindowUsage.slotStart,
      amount: quotaWindowUsage.amount,
    })
    .from(quotaWindowUsage)
    .where(inArray(quotaWindowUsage.windowKey, keys));
  return live.map((row, i) => {
    const period = periods[i] as { start: number; end: number };
    const used = usage.find((u) => u.key === keys[i] && u.slot === period.start)?.amount ?? 0;
    return {
      subscription: row,
      amountUsed: used,
      lastResetTime: period.start,
      nextResetTime: period.end < row.endTime ? period.end : 0,
    };
  });
}
