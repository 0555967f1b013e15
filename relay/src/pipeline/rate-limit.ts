/**
 * Per-user request rate limit of the relay (reference §9.1, options `ModelRequestRateLimit*`): within a sliding
 * window of `DurationMinutes`, a user may send at most `Count` requests of any outcome (0 = unlimited) and get at
 * most `SuccessCount` answers below 400. `ModelRequestRateLimitGroup` overrides both per group (the token's
 * group, else the owner's). The scope is the user id across every model and token, as in the reference.
 *
 * The windows are sliding logs of timestamps: sorted sets in Redis when `deps.redis` is set, so every relay
 * process sees one count (one script call per request, timed by the Redis clock), or a bounded in-process map
 * otherwise. A refused request is not counted. A success is recorded when the response finishes, after the
 * answer is sent, so the request path pays one Redis round trip. If Redis cannot be reached the limits are kept
 * by this process alone (`fallback`) and the failure logged: the limiter must not take the gateway down with it.
 * A 429 carries `Retry-After`, `X-RateLimit-Limit`, `X-RateLimit-Remaining` (0) and `X-RateLimit-Reset`.
 */

import { randomBytes } from 'node:crypto';
import { scriptRunner } from '@turnpike/core/kv/redis-script';
import type { OptionStore } from '@turnpike/core/options/store';
import type { FastifyBaseLogger } from 'fastify';
import type { Redis } from 'ioredis';
import type { RelayError, RelayReply, RelayRequest } from '../contract.ts';
import { localError } from '../errors.ts';
import type { Caller } from '../state/auth-cache.ts';

/** The limits that apply to one request. */
export interface RateLimits {
  /** Requests of any outcome per window; 0 is unlimited. */
  readonly total: number;
  /** Answers below 400 per window; 0 is unlimited. */
  readonly success: number;
  readonly windowMs: number;
}

export type AdmitResult =
  | { readonly ok: true }
  | { readonly ok: false; readonly limit: 'total' | 'success'; readonly retryAfterMs: number };

/** Where the windows live. */
export interface RateLimitStore {
  /** Checks both windows and, when the request may run, records it in the total window. */
  admit(userId: number, limits: RateLimits): Promise<AdmitResult>;
  /** Records one successful answer. */
  recordSuccess(userId: number, limits: RateLimits): Promise<void>;
}

export interface RateLimiter {
  /**
   * Called once per relay request right after authentication: undefined when the request may run (its success
   * is then recorded when the response finishes below 400), else the 429 to answer.
   */
  admit(request: RelayRequest, reply: RelayReply, caller: Caller): Promise<RelayError | undefined>;
}

/** The limits the options give a group, or undefined when the limit is off. */
export function limitsFor(options: OptionStore, group: string, windowMs?: number): RateLimits | undefined {
  if (!options.get('ModelRequestRateLimitEnabled')) return undefined;
  const override = options.get('ModelRequestRateLimitGroup')[group];
  const [total, success] = override ?? [
    options.get('ModelRequestRateLimitCount'),
    options.get('ModelRequestRateLimitSuccessCount'),
  ];
  if (total <= 0 && success <= 0) return undefined;
  return {
    total,
    success,
    windowMs: windowMs ?? options.get('ModelRequestRateLimitDurationMinutes') * 60_000,
  };
}

/** "1 minute", "5 minutes", or seconds for windows shorter than a minute (tests). */
function describeWindow(ms: number): string {
  if (ms % 60_000 === 0) {
    const minutes = ms / 60_000;
    return minutes === 1 ? '1 minute' : `${minutes} minutes`;
  }
  const seconds = Math.max(1, Math.round(ms / 1000));
  return seconds === 1 ? '1 second' : `${seconds} seconds`;
}

/** The 429 of a refused request, in OpenAI's error shape (a local error: never retried, no quota touched). */
export function rateLimitError(result: Extract<AdmitResult, { ok: false }>, limits: RateLimits): RelayError {
  const window = describeWindow(limits.windowMs);
  const message =
    result.limit === 'total'
      ? `request rate limit reached: at most ${limits.total} requests per ${window} for this user; try again later`
      : `request rate limit reached: at most ${limits.success} successful requests per ${window} for this user; try again later`;
  return localError(429, 'rate_limit_exceeded', message, 'rate_limit_error');
}

export function createRateLimiter(options: {
  options: OptionStore;
  store: RateLimitStore;
  /** Counts while `store` is unreachable; default: a store of this process. */
  fallback?: RateLimitStore;
  log: FastifyBaseLogger;
  /** Replaces `ModelRequestRateLimitDurationMinutes` (tests use windows of a fraction of a second). */
  windowMs?: number;
}): RateLimiter {
  const { store, log } = options;
  const fallback = options.fallback ?? createMemoryRateLimitStore();
  // While the store is down every request would warn; once a minute is enough to be noticed.
  let lastWarning = 0;
  const warn = (err: unknown, message: string) => {
    const now = Date.now();
    if (now - lastWarning < 60_000) return;
    lastWarning = now;
    log.warn({ err }, message);
  };
  return {
    async admit(_request, reply, caller) {
      const limits = limitsFor(options.options, caller.group, options.windowMs);
      if (!limits) return undefined;
      const userId = caller.user.id;
      let result: AdmitResult;
      let counting = store;
      try {
        result = await store.admit(userId, limits);
      } catch (err) {
        warn(err, 'rate limit store unavailable; limits are kept by this process alone');
        counting = fallback;
        result = await fallback.admit(userId, limits);
      }
      if (!result.ok) {
        const seconds = String(Math.max(1, Math.ceil(result.retryAfterMs / 1000)));
        reply.header('retry-after', seconds);
        reply.header('x-ratelimit-limit', String(result.limit === 'total' ? limits.total : limits.success));
        reply.header('x-ratelimit-remaining', '0');
        reply.header('x-ratelimit-reset', seconds);
        return rateLimitError(result, limits);
      }
      if (limits.success > 0) {
        reply.raw.once('finish', () => {
          if (reply.raw.statusCode >= 400) return;
          counting
            .recordSuccess(userId, limits)
            .catch((err: unknown) => warn(err, 'could not record a successful request'));
        });
      }
      return undefined;
    },
  };
}

interface Windows {
  total: number[];
  success: number[];
}

/** Drops the timestamps at or before `since` from the front of an ascending list. */
function prune(list: number[], since: number): void {
  let drop = 0;
  while (drop < list.length && (list[drop] as number) <= since) drop += 1;
  if (drop > 0) list.splice(0, drop);
}

/**
 * The windows of this process only. At most `maxUsers` users are tracked (the least recently seen are
 * forgotten first), and a list never holds more entries than its limit, so memory stays bounded under abuse.
 */
export function createMemoryRateLimitStore(
  settings: { maxUsers?: number; now?: () => number } = {},
): RateLimitStore & { readonly size: number } {
  const maxUsers = settings.maxUsers ?? 100_000;
  const now = settings.now ?? Date.now;
  const users = new Map<number, Windows>();

  const windowsOf = (userId: number): Windows => {
    let windows = users.get(userId);
    if (windows) users.delete(userId);
    else windows = { total: [], success: [] };
    users.set(userId, windows);
    if (users.size > maxUsers) users.delete(users.keys().next().value as number);
    return windows;
  };

  return {
    get size() {
      return users.size;
    },
    async admit(userId, limits) {
      const at = now();
      const since = at - limits.windowMs;
      const windows = windowsOf(userId);
      prune(windows.total, since);
      prune(windows.success, since);
      if (limits.total > 0 && windows.total.length >= limits.total)
        return { ok: false, limit: 'total', retryAfterMs: (windows.total[0] as number) - since };
      if (limits.success > 0 && windows.success.length >= limits.success)
        return { ok: false, limit: 'success', retryAfterMs: (windows.success[0] as number) - since };
      if (limits.total > 0) windows.total.push(at);
      return { ok: true };
    },
    async recordSuccess(userId, limits) {
      const at = now();
      const windows = windowsOf(userId);
      prune(windows.success, at - limits.windowMs);
      windows.success.push(at);
      // Concurrent requests admitted together may all succeed; keep only what the limit can ever look at.
      if (windows.success.length > limits.success)
        windows.success.splice(0, windows.success.length - limits.success);
    },
  };
}

// KEYS: total window, success window. ARGV: window ms, total limit (0 = none), success limit (0 = none), member.
// Returns {0} when admitted, else {1 (total) | 2 (success), ms until the oldest entry leaves the window}.
const ADMIT_SCRIPT = `
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local window = tonumber(ARGV[1])
local since = now - window
local totalMax = tonumber(ARGV[2])
local successMax = tonumber(ARGV[3])
local function full(key, max)
  if max <= 0 then return nil end
  redis.call('ZREMRANGEBYSCORE', key, '-inf', since)
  if redis.call('ZCARD', key) < max then return nil end
  local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
  return tonumber(oldest[2]) - since
end
local wait = full(KEYS[1], totalMax)
if wait then return {1, wait} end
wait = full(KEYS[2], successMax)
if wait then return {2, wait} end
if totalMax > 0 then
  redis.call('ZADD', KEYS[1], now, ARGV[4])
  redis.call('PEXPIRE', KEYS[1], window)
end
return {0, 0}
`;

// KEYS: success window. ARGV: window ms, success limit, member.
const SUCCESS_SCRIPT = `
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local window = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
redis.call('ZADD', KEYS[1], now, ARGV[3])
local extra = redis.call('ZCARD', KEYS[1]) - tonumber(ARGV[2])
if extra > 0 then redis.call('ZREMRANGEBYRANK', KEYS[1], 0, extra - 1) end
redis.call('PEXPIRE', KEYS[1], window)
return 0
`;

/**
 * The windows in Redis, shared by every relay process on it: `<prefix>ratelimit:{<user id>}:total|success`
 * (the braces keep both keys of a user on one cluster slot). Entries expire with their window.
 */
export function createRedisRateLimitStore(redis: Redis, keyPrefix: string): RateLimitStore {
  const admitScript = scriptRunner(redis, ADMIT_SCRIPT);
  const successScript = scriptRunner(redis, SUCCESS_SCRIPT);
  // Members must be unique across processes: two requests in the same millisecond are two entries.
  const processTag = randomBytes(6).toString('hex');
  let sequence = 0;
  const member = () => {
    sequence = (sequence + 1) % Number.MAX_SAFE_INTEGER;
    return `${processTag}:${sequence}`;
  };
  const keyOf = (userId: number, window: 'total' | 'success') =>
    `${keyPrefix}ratelimit:{${userId}}:${window}`;

  // A connection known to be down fails at once instead of queueing the request behind reconnects.
  const ensureUp = () => {
    if (redis.status === 'reconnecting' || redis.status === 'close' || redis.status === 'end')
      throw new Error(`redis is ${redis.status}`);
  };

  return {
    async admit(userId, limits) {
      ensureUp();
      const [code, wait] = (await admitScript(
        [keyOf(userId, 'total'), keyOf(userId, 'success')],
        [limits.windowMs, limits.total, limits.success, member()],
      )) as [number, number];
      if (code === 0) return { ok: true };
      return { ok: false, limit: code === 1 ? 'total' : 'success', retryAfterMs: Number(wait) };
    },
    async recordSuccess(userId, limits) {
      ensureUp();
      await successScript([keyOf(userId, 'success')], [limits.windowMs, limits.success, member()]);
    },
  };
}
