/**
 * Tokens and their owners, held in memory for token auth (reference §3.2) so the request path does not read
 * the database.
 *
 * Decision (ADR-style): **loaded on demand, once per key**, not all at boot. An installation may hold hundreds
 * of thousands of tokens of which few are active; loading on first use keeps boot fast and memory proportional
 * to active tokens. After the first load an entry is served from memory and:
 * - dropped on `tokens.changed` (by token id) and `users.changed` (the owner's snapshot, by user id), published
 *   by the console API in this or any other process (Redis bus);
 * - refreshed in the background once older than the sync period (`SYNC_FREQUENCY`), which covers a lost event;
 *   the stale value keeps serving meanwhile, so no request waits on that refresh.
 * Balances are not decided here: the ledger (core/billing/ledger.ts) admits every request against them. A token's
 * `remainQuota` only serves the "used up its quota" answer of an exhausted token.
 * Unknown keys are remembered (bounded, cleared on any `tokens.changed`) so a stream of bad keys cannot turn
 * into a stream of database reads.
 */

import { type QuotaWindow, quotaWindowsSchema } from '@turnpike/core/billing/quota-windows';
import type { Db } from '@turnpike/core/db/client';
import { type Token, tokens, userSubscriptions, users } from '@turnpike/core/db/schema/index';
import {
  PLAN_RESET_PERIODS,
  type PlanResetPeriod,
  SubscriptionStatus,
} from '@turnpike/core/domain/closed-sets';
import { type IpRule, parseAllowIps } from '@turnpike/core/domain/tokens';
import type { EventBus } from '@turnpike/core/events/bus';
import type { LimitSet } from '@turnpike/core/options/rate-limits';
import type { AllowanceTerms } from '@turnpike/core/plans/periods';
import { and, asc, eq, isNull } from 'drizzle-orm';

/** The owner of a token as the relay needs it. */
export interface UserSnapshot {
  readonly id: number;
  readonly username: string;
  readonly role: number;
  readonly status: number;
  readonly group: string;
  /** `accept_unset_model_ratio_model` from the user's settings. */
  readonly acceptUnsetModelRatio: boolean;
  /** The user's own quota windows (docs/adr/0043), beside its group's (`GroupQuotaWindows`); absent: none. */
  readonly quotaWindows?: readonly QuotaWindow[];
  /**
   * The user's active subscriptions (docs/adr/0049), the one ending first first: their allowances pay before the
   * wallet while the relay's clock is within their terms, so one ending while cached stops paying at its end.
   */
  readonly subscriptions?: readonly AllowanceTerms[];
  loadedAt: number;
}

export interface TokenSnapshot {
  readonly id: number;
  readonly userId: number;
  readonly key: string;
  readonly name: string;
  readonly status: number;
  readonly expiredTime: number;
  /** As last read from the database: the ledger decides whether a request is covered. */
  readonly remainQuota: number;
  readonly unlimitedQuota: boolean;
  /** Undefined when the token may use every model. */
  readonly modelLimits: ReadonlySet<string> | undefined;
  readonly ipRules: readonly IpRule[];
  /** Empty: the owner's group. */
  readonly group: string;
  /** Requests per minute, tokens per minute and requests in flight with this token (docs/adr/0028). */
  readonly limits?: LimitSet;
  /** The token's quota windows (docs/adr/0043); absent: none. */
  readonly quotaWindows?: readonly QuotaWindow[];
  loadedAt: number;
}

export interface AuthCache {
  /** The token with this key (without `sk-`) and its owner, or undefined when there is no such token. */
  lookup(key: string): Promise<{ token: TokenSnapshot; user: UserSnapshot } | undefined>;
  close(): void;
}

const MAX_UNKNOWN_KEYS = 10_000;

function readAcceptUnset(setting: string): boolean {
  try {
    const parsed = JSON.parse(setting) as { accept_unset_model_ratio_model?: unknown };
    return parsed?.accept_unset_model_ratio_model === true;
  } catch {
    return false;
  }
}

/**
 * A row's stored windows as the relay counts them: the `/api` contracts and the operator validate what they save, so
 * a list this schema refuses was written around them; it is reported and none of it applies.
 */
export function readQuotaWindows(stored: unknown, onError: (error: unknown) => void): readonly QuotaWindow[] {
  if (Array.isArray(stored) && stored.length === 0) return NO_WINDOWS;
  const parsed = quotaWindowsSchema.safeParse(stored);
  if (parsed.success) return parsed.data;
  onError(new Error(`unreadable quota_windows ignored: ${parsed.error.issues[0]?.message ?? 'invalid'}`));
  return NO_WINDOWS;
}

const NO_WINDOWS: readonly QuotaWindow[] = Object.freeze([]);
const NO_SUBSCRIPTIONS: readonly AllowanceTerms[] = Object.freeze([]);

const isPlanResetPeriod = (value: string): value is PlanResetPeriod =>
  (PLAN_RESET_PERIODS as readonly string[]).includes(value);

function toTokenSnapshot(row: Token, now: number, onError: (error: unknown) => void): TokenSnapshot {
  const limits = row.modelLimits
    .split(',')
    .map((m) => m.trim())
    .filter(Boolean);
  return {
    id: row.id,
    userId: row.userId,
    key: row.key,
    name: row.name,
    status: row.status,
    expiredTime: row.expiredTime,
    remainQuota: row.remainQuota,
    unlimitedQuota: row.unlimitedQuota,
    modelLimits: row.modelLimitsEnabled ? new Set(limits) : undefined,
    ipRules: parseAllowIps(row.allowIps).rules,
    group: row.group,
    limits: { rpm: row.rpmLimit, tpm: row.tpmLimit, concurrency: row.concurrencyLimit },
    quotaWindows: readQuotaWindows(row.quotaWindows, onError),
    loadedAt: now,
  };
}

export function createAuthCache(options: {
  db: Db;
  bus: EventBus;
  /** Entries older than this are refreshed in the background. */
  maxAgeMs: number;
  onError?: (error: unknown) => void;
}): AuthCache {
  const { db } = options;
  const onError = options.onError ?? (() => {});
  const byKey = new Map<string, TokenSnapshot>();
  const keyById = new Map<number, string>();
  const usersById = new Map<number, UserSnapshot>();
  const unknownKeys = new Set<string>();
  const pendingTokens = new Map<string, Promise<TokenSnapshot | undefined>>();
  const pendingUsers = new Map<number, Promise<UserSnapshot | undefined>>();

  async function loadToken(key: string): Promise<TokenSnapshot | undefined> {
    const [row] = await db
      .select()
      .from(tokens)
      .where(and(eq(tokens.key, key), isNull(tokens.deletedAt)))
      .limit(1);
    if (!row) {
      byKey.delete(key);
      if (unknownKeys.size >= MAX_UNKNOWN_KEYS) unknownKeys.clear();
      unknownKeys.add(key);
      return undefined;
    }
    const snapshot = toTokenSnapshot(row, Date.now(), onError);
    byKey.set(key, snapshot);
    keyById.set(row.id, key);
    return snapshot;
  }

  async function loadSubscriptions(userId: number): Promise<readonly AllowanceTerms[]> {
    const rows = await db
      .select({
        id: userSubscriptions.id,
        amountTotal: userSubscriptions.amountTotal,
        quotaResetPeriod: userSubscriptions.quotaResetPeriod,
        quotaResetCustomSeconds: userSubscriptions.quotaResetCustomSeconds,
        startTime: userSubscriptions.startTime,
        endTime: userSubscriptions.endTime,
      })
      .from(userSubscriptions)
      .where(
        // The relay's clock decides whether one has begun or ended (`isRunning`); the job expires them in the rows.
        and(eq(userSubscriptions.userId, userId), eq(userSubscriptions.status, SubscriptionStatus.Active)),
      )
      .orderBy(asc(userSubscriptions.endTime), asc(userSubscriptions.id));
    if (rows.length === 0) return NO_SUBSCRIPTIONS;
    return rows.flatMap((row) =>
      isPlanResetPeriod(row.quotaResetPeriod) ? [{ ...row, quotaResetPeriod: row.quotaResetPeriod }] : [],
    );
  }

  async function loadUser(id: number): Promise<UserSnapshot | undefined> {
    const [row] = await db
      .select()
      .from(users)
      .where(and(eq(users.id, id), isNull(users.deletedAt)))
      .limit(1);
    if (!row) {
      usersById.delete(id);
      return undefined;
    }
    const snapshot: UserSnapshot = {
      id: row.id,
      username: row.username,
      role: row.role,
      status: row.status,
      group: row.group,
      acceptUnsetModelRatio: readAcceptUnset(row.setting),
      quotaWindows: readQuotaWindows(row.quotaWindows, onError),
      subscriptions: await loadSubscriptions(id),
      loadedAt: Date.now(),
    };
    usersById.set(id, snapshot);
    return snapshot;
  }

  const once = <K, V>(pending: Map<K, Promise<V>>, key: K, load: (key: K) => Promise<V>): Promise<V> => {
    const running = pending.get(key);
    if (running) return running;
    const promise = load(key).finally(() => pending.delete(key));
    pending.set(key, promise);
    return promise;
  };

  const refreshInBackground = <K, V>(pending: Map<K, Promise<V>>, key: K, load: (key: K) => Promise<V>) => {
    if (pending.has(key)) return;
    once(pending, key, load).catch(onError);
  };

  const unsubscribe = options.bus.subscribe((event) => {
    if (event.type === 'all.changed') {
      unknownKeys.clear();
      byKey.clear();
      keyById.clear();
      usersById.clear();
    } else if (event.type === 'tokens.changed') {
      unknownKeys.clear();
      for (const id of event.ids) {
        const key = keyById.get(id);
        if (key !== undefined) byKey.delete(key);
        keyById.delete(id);
      }
    } else if (event.type === 'users.changed') {
      for (const id of event.ids) usersById.delete(id);
    }
  });

  return {
    async lookup(key) {
      const now = Date.now();
      let token = byKey.get(key);
      if (token === undefined) {
        if (unknownKeys.has(key)) return undefined;
        token = await once(pendingTokens, key, loadToken);
        if (token === undefined) return undefined;
      } else if (now - token.loadedAt > options.maxAgeMs) {
        token.loadedAt = now;
        refreshInBackground(pendingTokens, key, loadToken);
      }
      let user = usersById.get(token.userId);
      if (user === undefined) {
        user = await once(pendingUsers, token.userId, loadUser);
        if (user === undefined) return undefined;
      } else if (now - user.loadedAt > options.maxAgeMs) {
        user.loadedAt = now;
        refreshInBackground(pendingUsers, token.userId, loadUser);
      }
      return { token, user };
    },
    close: unsubscribe,
  };
}

/** An authenticated caller: its token, the token's owner and the group the call is routed and priced in. */
export interface Caller {
  readonly token: TokenSnapshot;
  readonly user: UserSnapshot;
  /** The group the request is routed and priced in: the token's, else the owner's. */
  readonly group: string;
  /** `sk-<key>-<channel id>`, admins only: the one channel to use, no retries. */
  readonly forcedChannelId: number | undefined;
}
