/**
 * Rounding for quota amounts. Ratios are decimals (0.075, 1.25) that binary floating point cannot hold exactly,
 * so 2 × 1.25 may come out as 2.4999999999999996 and a plain Math.round would charge 2 instead of 3. Every
 * product is first cut to 15 significant digits (beyond any meaningful ratio, well inside double precision),
 * which lands such values on the decimal result, then rounded half up — the same answer as the reference's
 * decimal arithmetic for every non-negative amount.
 */
export function roundQuota(value: number): number {
  if (!Number.isFinite(value)) throw new RangeError(`quota amount is not a finite number: ${value}`);
  // Below 10^12 the cut moves a value by less than 0.0005, which only matters right beside a half.
  if (value >= 0 && value < 1e12 && Math.abs(value - Math.floor(value) - 0.5) > 0.001)
    return Math.round(value);
  return Math.round(Number(value.toPrecision(15)));
}

/** Whole quota units, truncated toward zero after the same decimal clean-up (for estimates and checks). */
export function truncateQuota(value: number): number {
  if (!Number.isFinite(value)) throw new RangeError(`quota amount is not a finite number: ${value}`);
  // Below 10^12 the cut can only lift a value sitting just under a whole number (a fraction ≥ 0.9995).
  if (value >= 0 && value < 1e12 && value - Math.floor(value) < 0.99) return Math.trunc(value);
  return Math.trunc(Number(value.toPrecision(15)));
}
