/**
 * The hold step: a request is admitted only when its estimate can be held on the ledger (core/billing/ledger.ts,
 * docs/adr/0016) against the user and, when its quota is limited, the token. The check and the hold are one step
 * (one Redis script across every relay process, or one synchronous update in memory), so concurrent requests can
 * never together be admitted for more than the balance. The hold is settled exactly once (settle.ts); the debit
 * and the consume log are then written together by the batching writer. No SQL runs on this path.
 *
 * The caller's quota windows (docs/adr/0043) are checked and held in that same step: a call is admitted only when the
 * balances and every window can cover it, and a window's refusal is a 429 naming it (`../limits/windows.ts`).
 *
 * A plan's allowance (docs/adr/0049) pays before the wallet: the call is first held on the allowance (a window claim)
 * and the limited token, without the user's balance; only when no running allowance can cover it is it held on the
 * wallet as before. A call is paid by one of them whole, never split.
 */

import {
  type Account,
  type Hold,
  type HoldResult,
  isWindowAccount,
  tokenAccount,
  userAccount,
} from '@turnpike/core/billing/ledger';
import type { Payer } from '../books/settlement-context.ts';
import type { RelayError } from '../contract.ts';
import { localError } from '../errors.ts';
import { rememberRefusalHeaders } from '../limits/admit.ts';
import { allowanceClaims } from '../limits/allowance.ts';
import { checkOf, describeWindow, type WindowCheck, windowChecks, windowRefusal } from '../limits/windows.ts';
import type { RelayContext } from './context.ts';

/** The ledger accounts a payer draws on. */
export function accountsOf(payer: Payer): Account[] {
  return payer.tokenUnlimited
    ? [userAccount(payer.userId)]
    : [userAccount(payer.userId), tokenAccount(payer.tokenId)];
}

/** A refusal that is the gateway's trouble, not the caller's: a 503 the caller may retry in a second. */
const degraded = (message: string): RelayError => ({
  ...localError(503, 'gateway_degraded', message, 'server_error'),
  retryAfterSeconds: 1,
});

/**
 * Holds `amount` for the request, or says which balance (HTTP 403, never retried) or which quota window (429 with
 * Retry-After until it frees, and its `x-turnpike-window*` headers, remembered for `applyRefusalHeaders`) cannot
 * cover it; a refusal made while the ledger is degraded is the gateway's trouble: a 503 with Retry-After, never an
 * empty balance or a spent window.
 */
export async function holdQuota(
  ctx: RelayContext,
  payer: Payer,
  amount: number,
): Promise<{ ok: true; hold: Hold } | { ok: false; error: RelayError }> {
  // Past the cap of settled calls waiting for the database, a paid call is refused rather than served unbilled.
  if (amount > 0 && ctx.writer.isFull())
    return {
      ok: false,
      error: degraded(
        'the gateway cannot record usage right now (its database is unreachable or its disk is full); retry shortly',
      ),
    };
  const now = payer.windows?.length || payer.allowances?.length ? ctx.windowClock() : 0;
  const checks: WindowCheck[] | undefined = payer.windows?.length
    ? windowChecks(payer.windows, now, ctx.deps.options.get('QuotaWindowTimeZone'))
    : undefined;
  if (payer.allowances?.length) {
    const paid = await holdOnAllowance(ctx, payer, amount, now, checks);
    if (paid) return paid;
  }
  const result = await ctx.ledger.hold(accountsOf(payer), amount, checks);
  if (result.ok) return result;
  if (result.degraded)
    return {
      ok: false,
      error: degraded(
        'the gateway cannot check balances right now (its shared store is unreachable); retry shortly',
      ),
    };
  const window = result.window && checks ? checkOf(checks, result.window) : undefined;
  if (window && result.window && isWindowAccount(result.account)) {
    const refused = windowRefusal(window, result.window, amount, now);
    rememberRefusalHeaders(refused.error, refused.headers);
    return { ok: false, error: refused.error };
  }
  const isUser = result.account[0] === 'u';
  // Both short: the balance is what a wait would not fix, and the window is named beside it.
  const also = window ? `; ${describeWindow(window)} cannot cover it either` : '';
  return {
    ok: false,
    error: localError(
      403,
      isUser ? 'insufficient_user_quota' : 'pre_consume_token_quota_failed',
      `${isUser ? 'user' : 'token'} quota is not enough (needs ${amount}, has ${result.available})${also}`,
    ),
  };
}

/**
 * Holds `amount` on the first running allowance that covers it (with the limited token and the caller's windows);
 * undefined when none does, or when a refusal came from elsewhere (the token, a window, a degraded ledger), which the
 * wallet's hold then answers in its own words.
 */
async function holdOnAllowance(
  ctx: RelayContext,
  payer: Payer,
  amount: number,
  now: number,
  checks: readonly WindowCheck[] | undefined,
): Promise<{ ok: true; hold: Hold } | undefined> {
  const claims = allowanceClaims(payer.allowances ?? [], now, ctx.deps.options.get('QuotaWindowTimeZone'));
  const accounts = payer.tokenUnlimited ? [] : [tokenAccount(payer.tokenId)];
  for (const claim of claims) {
    const held: HoldResult = await ctx.ledger.hold(accounts, amount, checks ? [...checks, claim] : [claim]);
    if (held.ok) return held;
    if (held.degraded || held.window?.claim.key !== claim.key) return undefined;
  }
  return undefined;
}
