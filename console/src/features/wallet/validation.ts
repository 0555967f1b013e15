/** Wallet rules (spec 02 section 5); error answers are keys of the `wallet` namespace. */

/** The status fields that shape a top-up. */
export interface TopUpSettings {
  /** MinTopUp, in units (one dollar's worth of quota). */
  min_topup: number;
  display_in_currency: boolean;
  quota_per_unit: number;
}

/**
 * The smallest amount the user may enter, in the unit they enter it in: units when quota is shown as money,
 * otherwise quota (MinTopUp times QuotaPerUnit), which is what the server enforces.
 */
export function minimumTopUp(s: TopUpSettings): number {
  const min = Math.max(1, s.min_topup || 1);
  return s.display_in_currency ? min : min * s.quota_per_unit;
}

/** The typed amount as a whole number; anything below 1 (or not a number) is raised to 1. */
export function parseAmount(text: string): number {
  const n = Number.parseInt(text.trim(), 10);
  return Number.isNaN(n) || n < 1 ? 1 : n;
}

export type AmountError = 'error.belowMinimum';

export const checkAmount = (amount: number, minimum: number): AmountError | null =>
  amount < minimum ? 'error.belowMinimum' : null;

export const checkCode = (code: string): 'error.codeRequired' | null =>
  code.trim() ? null : 'error.codeRequired';

/** Quota credited once an amount is paid: whole units times QuotaPerUnit (the server drops a partial unit). */
export function creditedQuota(amount: number, s: TopUpSettings): number {
  const units = s.display_in_currency ? amount : Math.floor(amount / s.quota_per_unit);
  return Math.round(units * s.quota_per_unit);
}
