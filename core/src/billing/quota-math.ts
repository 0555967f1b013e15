/**
 * Rounding for quota amounts. Ratios are decimals (0.075, 1.25) that binary floating point cannot hold exactly,
 * so 2 × 1.25 may come out as 2.4999999999999996 and a plain Math.round would charge 2 instead of 3. Every
 * product is first cut to 15 significant digits (beyond any meaningful ratio, well inside double precision),
 * which lands such values on the decimal result, then rounded half up — the same answer as the reference's
 * decimal arithmetic for every non-negative amount.
 */
export function roundQuota(value: number): number {
  if (!Number.isFinite(value)) throw new RangeError(`quota amount is not a finite number: ${value}`);
  return Math.round(Number(value.toPrecision(15)));
}

/** Whole quota units, truncated toward zero after the same decimal clean-up (for estimates and checks). */
export function truncateQuota(value: number): number {
  if (!Number.isFinite(value)) throw new RangeError(`quota amount is not a finite number: ${value}`);
  return Math.trunc(Number(value.toPrecision(15)));
}
