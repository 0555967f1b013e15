/** Scale helpers of the hand-drawn SVG charts; pure so they can be tested without a browser. */

/**
 * Round y-axis ticks from 0 to at least `max`: about `count` steps of 1, 2, 2.5 or 5 times a power of ten.
 * An all-zero chart still gets an axis (0 to 1).
 */
export function niceTicks(max: number, count = 4): number[] {
  if (!(max > 0)) return [0, 1];
  const raw = max / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = ([1, 2, 2.5, 5, 10].find((m) => m * power >= raw) ?? 10) * power;
  const ticks: number[] = [];
  for (let i = 0; ; i++) {
    // multiply rather than add, so 0.1-steps do not drift into 0.30000000000000004
    const value = Number((i * step).toPrecision(12));
    ticks.push(value);
    if (value >= max) break;
  }
  return ticks;
}

/** Which x labels to print so that at most `room` fit: every n-th one, always starting with the first. */
export function labelStep(total: number, room: number): number {
  if (total <= 0) return 1;
  return Math.max(1, Math.ceil(total / Math.max(1, Math.floor(room))));
}

/** Colours of the series, distinct in light and dark themes; the last one is kept for "other". */
export const SERIES_COLORS = [
  '#2563eb',
  '#16a34a',
  '#f59e0b',
  '#dc2626',
  '#9333ea',
  '#0891b2',
  '#db2777',
  '#65a30d',
] as const;
export const OTHER_COLOR = '#9ca3af';

export const seriesColor = (index: number): string =>
  SERIES_COLORS[index % SERIES_COLORS.length] ?? OTHER_COLOR;
