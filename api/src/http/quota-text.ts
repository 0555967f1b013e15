/** Quota as people read it in log texts: dollars with six decimals, plus the raw units. */
export function formatQuota(quota: number, quotaPerUnit: number): string {
  return `$${(quota / quotaPerUnit).toFixed(6)} (${quota} quota)`;
}
