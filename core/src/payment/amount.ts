/** Inputs of the top-up price: the options that shape it and the buyer's group. */
export interface TopUpPricing {
  /** Money per unit (one dollar's worth of quota) in the payment currency. */
  readonly price: number;
  /** Payment multiplier of the buyer's group (TopupGroupRatio; 1 when the group is not listed). */
  readonly groupRatio: number;
  /** When on, amounts are entered in units (dollars); when off, in quota, and divided by QuotaPerUnit. */
  readonly displayInCurrency: boolean;
  readonly quotaPerUnit: number;
  /** Smallest top-up in units (MinTopUp). */
  readonly minTopUp: number;
}

/** The smallest amount the user may enter, in the unit they enter amounts in. */
export function minimumAmount(pricing: TopUpPricing): number {
  return pricing.displayInCurrency ? pricing.minTopUp : pricing.minTopUp * pricing.quotaPerUnit;
}

/** Units bought for an entered amount (whole units, as stored in top_ups.amount). */
export function unitsOf(amount: number, pricing: TopUpPricing): number {
  return pricing.displayInCurrency ? amount : Math.floor(amount / pricing.quotaPerUnit);
}

/** Money to pay for `units`, rounded to the cent. */
export function payableMoney(units: number, pricing: TopUpPricing): number {
  // toPrecision drops binary noise first, so 18.615 rounds up as people expect, not down.
  const cents = Number((units * pricing.price * pricing.groupRatio * 100).toPrecision(12));
  return Math.round(cents) / 100;
}

/** Quota credited for `units` once paid. */
export function quotaOfUnits(units: number, quotaPerUnit: number): number {
  return Math.round(units * quotaPerUnit);
}
