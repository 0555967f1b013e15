/** The next local midnight, as Unix seconds: a day window resets then, which the console shows as 00:00. */
export function nextMidnight(): number {
  const d = new Date();
  d.setHours(24, 0, 0, 0);
  return d.getTime() / 1000;
}
