/**
 * Plan allowances at admission (docs/adr/0049): a user's running subscriptions as the ledger's window claims, so a
 * call is held on an allowance exactly as on a quota window slot (`p:<id>|quota:<period>@<period start>`), and
 * spent before the wallet. Nothing here reads the database: the subscriptions come with the cached user.
 */
import type { WindowClaim } from '@turnpike/core/billing/ledger';
import {
  type AllowanceTerms,
  allowanceKey,
  allowanceLimit,
  allowancePeriod,
  isRunning,
} from '@turnpike/core/plans/periods';

/** The claims of the subscriptions running at `now`, the one ending first first (it is spent first). */
export function allowanceClaims(
  subscriptions: readonly AllowanceTerms[],
  now: number,
  timeZone: string,
): WindowClaim[] {
  const claims: WindowClaim[] = [];
  for (const terms of subscriptions) {
    if (!isRunning(terms, now)) continue;
    claims.push({
      key: allowanceKey(terms),
      slot: allowancePeriod(terms, now, timeZone).start,
      step: 0,
      slots: 1,
      limit: allowanceLimit(terms),
      unit: 'quota',
    });
  }
  return claims;
}
