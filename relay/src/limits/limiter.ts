/**
 * Requests per minute, tokens per minute and concurrent requests (docs/adr/0028), beside the per-user request rate
 * limit of `pipeline/rate-limit.ts`. Scopes: the user (`RateLimitUserDefault`, replaced by the user's group entry in
 * `RateLimitGroups`), the token (its columns), the model (`RateLimitModels`, across every caller) and the channel
 * (its columns, asked per attempt). A request is admitted only when every counter that applies has room, in one
 * step (one Lua script with Redis, one synchronous update without); tokens are charged with the estimate (prompt
 * plus the requested output) and corrected with the real usage at settlement; a concurrency slot is a lease,
 * renewed while the request runs and released exactly once when it is settled, so a crashed relay's slots come
 * back when their lease ends.
 *
 * If Redis cannot be reached the counters of this process take over (the failure logged once a minute): the
 * limiter must not take the gateway down with it.
 */

import { randomBytes } from 'node:crypto';
import { hasLimits, LimitKind, type LimitScope, type LimitSet } from '@turnpike/core/options/rate-limits';
import type { OptionStore } from '@turnpike/core/options/store';
import type { FastifyBaseLogger } from 'fastify';
import type { RelayError, RelayReply } from '../contract.ts';
import { localError } from '../errors.ts';
import {
  type CounterRequest,
  type CounterResult,
  type CounterStore,
  createMemoryCounterStore,
  type RateCheck,
  type SlotCheck,
} from './counters.ts';
import { limitHeaders } from './headers.ts';

/** One counter a request is checked against. */
export interface Check {
  readonly scope: LimitScope;
  readonly kind: LimitKind;
  /** The counter's name, e.g. `t:12:tpm`. */
  readonly key: string;
  readonly limit: number;
  /** Who the limit is for, in messages: "this token", "the model gpt-4o". */
  readonly subject: string;
}

/** An admitted request's hold on its counters, settled exactly once. */
export interface LimitTicket {
  /** Corrects the token counters from the estimate to `tokens` (the real usage) and frees the slots. */
  settle(tokens: number): void;
}

export type LimitAdmission =
  | { readonly ok: true; readonly ticket: LimitTicket | undefined }
  | {
      readonly ok: false;
      readonly error: RelayError;
      readonly scope: LimitScope;
      readonly kind: LimitKind;
      /** The headers of the refusal (`Retry-After`, `X-RateLimit-*`, Anthropic's for Anthropic clients). */
      readonly headers: Readonly<Record<string, string>>;
    };

export interface AdmitInput {
  readonly checks: readonly Check[];
  /** The estimate of the request's tokens; read only when a token limit applies. */
  readonly estimateTokens: () => number;
  /** The client speaks Anthropic's protocol: its `anthropic-ratelimit-*` headers are added. */
  readonly isAnthropic: boolean;
}

export interface Limiter {
  admit(input: AdmitInput): Promise<LimitAdmission>;
  /** Stops renewing leases (the app closes). */
  close(): void;
}

/** The longest a request keeps its slots renewed (far beyond any stream's timeout). */
const MAX_HOLD_MS = 6 * 3_600_000;

const KEY_SUFFIX: Record<LimitKind, string> = { requests: 'rpm', tokens: 'tpm', concurrency: 'conc' };

/** The checks of one limit set: one per limit above 0. */
export function checksOf(scope: LimitScope, id: string, subject: string, set: LimitSet | undefined): Check[] {
  if (!hasLimits(set)) return [];
  const checks: Check[] = [];
  const add = (kind: LimitKind, limit: number | undefined) => {
    if (limit !== undefined && limit > 0)
      checks.push({ scope, kind, key: `${id}:${KEY_SUFFIX[kind]}`, limit, subject });
  };
  add(LimitKind.Requests, set.rpm);
  add(LimitKind.Tokens, set.tpm);
  add(LimitKind.Concurrency, set.concurrency);
  return checks;
}

/** The request-level checks: the user (or the user's group), the token and the model. */
export function requestChecks(
  options: OptionStore,
  caller: {
    readonly userId: number;
    readonly group: string;
    readonly tokenId: number;
    readonly token?: LimitSet;
  },
  model: string,
): Check[] {
  const groupSet = options.get('RateLimitGroups')[caller.group];
  const userSet = groupSet ?? options.get('RateLimitUserDefault');
  const modelSet = options.get('RateLimitModels')[model];
  // Most calls have no limit at all: nothing is built for them (the keys and wording are per call).
  if (!hasLimits(userSet) && !hasLimits(caller.token) && !hasLimits(modelSet)) return [];
  const userChecks = groupSet
    ? checksOf('group', `u:${caller.userId}`, `each user of the group ${caller.group}`, groupSet)
    : checksOf('user', `u:${caller.userId}`, 'this user', userSet);
  return [
    ...userChecks,
    ...checksOf('token', `t:${caller.tokenId}`, 'this token', caller.token),
    ...checksOf('model', `m:${model}`, `the model ${model}`, modelSet),
  ];
}

/** The checks of a channel, asked for each attempt on it. */
export const channelChecks = (channel: { readonly id: number; readonly limits?: LimitSet }): Check[] =>
  hasLimits(channel.limits)
    ? checksOf('channel', `c:${channel.id}`, `the channel ${channel.id}`, channel.limits)
    : [];

/** "12 s", "1 min 5 s". */
function describeWait(ms: number): string {
  const seconds = Math.max(1, Math.ceil(ms / 1000));
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  const rest = seconds % 60;
  return rest === 0 ? `${minutes} min` : `${minutes} min ${rest} s`;
}

/** The 429 of a refused request, in words that say which limit and when to come back. */
export function refusalError(check: Check, amount: number, retryAfterMs: number): RelayError {
  const retryAfterSeconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  let message: string;
  if (check.kind === LimitKind.Concurrency)
    message = `concurrency limit reached: at most ${check.limit} requests at a time for ${check.subject}; retry when one has finished`;
  else if (check.kind === LimitKind.Requests)
    message = `rate limit reached: at most ${check.limit} requests per minute for ${check.subject}; try again in ${describeWait(retryAfterMs)}`;
  else if (amount > check.limit)
    message = `request too large: it needs about ${amount} tokens (prompt and requested output), more than the ${check.limit} tokens per minute allowed for ${check.subject}; shorten the prompt or lower max_tokens`;
  else
    message = `rate limit reached: at most ${check.limit} tokens per minute for ${check.subject} (this request needs about ${amount}); try again in ${describeWait(retryAfterMs)}`;
  return { ...localError(429, 'rate_limit_exceeded', message, 'rate_limit_error'), retryAfterSeconds };
}

export function createLimiter(settings: {
  store: CounterStore;
  /** Counts while `store` is unreachable; default: a store of this process. */
  fallback?: CounterStore;
  log: FastifyBaseLogger;
  /** The window of rpm and tpm; a minute unless a test says otherwise. */
  windowMs?: number;
  /** How long a slot lives without renewal (a crashed relay's slots come back after it); default 60 s. */
  leaseMs?: number;
}): Limiter {
  const { store, log } = settings;
  const fallback = settings.fallback ?? createMemoryCounterStore();
  const windowMs = settings.windowMs ?? 60_000;
  const leaseMs = settings.leaseMs ?? 60_000;
  // Members must be unique across processes: two requests in the same millisecond hold two slots.
  const processTag = randomBytes(6).toString('hex');
  let sequence = 0;
  let lastWarning = 0;
  const warn = (err: unknown, message: string) => {
    const now = Date.now();
    if (now - lastWarning < 60_000) return;
    lastWarning = now;
    log.warn({ err }, message);
  };

  /** The slots held by requests still running, renewed together a few times per lease. */
  const live = new Map<string, { keys: string[]; store: CounterStore; since: number }>();
  const renewal = setInterval(
    () => {
      const now = Date.now();
      for (const [member, held] of live) {
        // A slot held this long belongs to a request something failed to settle: its lease is left to end.
        if (now - held.since > MAX_HOLD_MS) {
          live.delete(member);
          continue;
        }
        held.store
          .renew(held.keys, member, leaseMs)
          .catch((err: unknown) => warn(err, 'could not renew a concurrency lease'));
      }
    },
    Math.max(10, Math.floor(leaseMs / 3)),
  );
  renewal.unref();

  return {
    async admit(input) {
      if (input.checks.length === 0) return { ok: true, ticket: undefined };
      const needsTokens = input.checks.some((c) => c.kind === LimitKind.Tokens);
      const estimate = needsTokens ? Math.max(0, Math.ceil(input.estimateTokens())) : 0;
      const rateChecks = input.checks.filter((c) => c.kind !== LimitKind.Concurrency);
      const slotChecks = input.checks.filter((c) => c.kind === LimitKind.Concurrency);
      sequence = (sequence + 1) % Number.MAX_SAFE_INTEGER;
      const request: CounterRequest = {
        rates: rateChecks.map(
          (c): RateCheck => ({
            key: c.key,
            limit: c.limit,
            amount: c.kind === LimitKind.Tokens ? estimate : 1,
          }),
        ),
        slots: slotChecks.map((c): SlotCheck => ({ key: c.key, limit: c.limit })),
        member: `${processTag}:${sequence}`,
        windowMs,
        leaseMs,
      };
      let counting = store;
      let result: CounterResult;
      try {
        result = await store.admit(request);
      } catch (err) {
        warn(err, 'limit store unavailable; limits are kept by this process alone');
        counting = fallback;
        result = await fallback.admit(request);
      }
      if (!result.ok) {
        const check = (result.refused.type === 'rate' ? rateChecks : slotChecks)[
          result.refused.index
        ] as Check;
        const amount = check.kind === LimitKind.Tokens ? estimate : 1;
        return {
          ok: false,
          error: refusalError(check, amount, result.retryAfterMs),
          scope: check.scope,
          kind: check.kind,
          headers: limitHeaders({
            rateChecks,
            slotChecks,
            result,
            refused: check,
            isAnthropic: input.isAnthropic,
          }),
        };
      }
      const { bucket } = result;
      const tokenKeys = rateChecks.filter((c) => c.kind === LimitKind.Tokens).map((c) => c.key);
      const slotKeys = slotChecks.map((c) => c.key);
      if (slotKeys.length > 0)
        live.set(request.member, { keys: slotKeys, store: counting, since: Date.now() });
      let settled = false;
      const ticket: LimitTicket = {
        settle(tokens) {
          if (settled) return;
          settled = true;
          live.delete(request.member);
          const delta = Math.max(0, Math.ceil(tokens)) - estimate;
          if (tokenKeys.length > 0 && delta !== 0)
            counting
              .correct(
                tokenKeys,
                bucket,
                tokenKeys.map(() => delta),
                windowMs,
              )
              .catch((err: unknown) => warn(err, 'could not correct a token limit with the real usage'));
          if (slotKeys.length > 0)
            counting
              .release(slotKeys, request.member)
              .catch((err: unknown) => warn(err, 'could not release a concurrency slot'));
        },
      };
      return { ok: true, ticket };
    },
    close() {
      clearInterval(renewal);
    },
  };
}

/** Writes a refusal's headers on the reply. */
export function applyHeaders(reply: RelayReply, headers: Readonly<Record<string, string>>): void {
  for (const [name, value] of Object.entries(headers)) reply.header(name, value);
}
