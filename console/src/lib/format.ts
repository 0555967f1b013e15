/** Display rules shared by every screen (spec 01 section 9). */

export const DEFAULT_QUOTA_PER_UNIT = 500_000;

export interface QuotaDisplay {
  /** Quota units per currency unit (QuotaPerUnit). */
  quotaPerUnit?: number;
  /** DisplayInCurrencyEnabled: show money instead of raw units. */
  inCurrency?: boolean;
}

/** Quota shown as currency is quota / unit with two decimals, e.g. `$1.00`; otherwise the raw units. */
export function formatQuota(
  quota: number,
  { quotaPerUnit = DEFAULT_QUOTA_PER_UNIT, inCurrency = true }: QuotaDisplay = {},
): string {
  if (!inCurrency) return formatNumber(quota);
  const unit = quotaPerUnit > 0 ? quotaPerUnit : DEFAULT_QUOTA_PER_UNIT;
  return `$${(quota / unit).toFixed(2)}`;
}

/** Token counts: from 1e4 in thousands (K), from 1e6 in millions (M), from 1e9 in billions (B). */
export function formatTokens(count: number): string {
  const abs = Math.abs(count);
  const trim = (n: number) => n.toFixed(2).replace(/\.?0+$/, '');
  if (abs >= 1e9) return `${trim(count / 1e9)}B`;
  if (abs >= 1e6) return `${trim(count / 1e6)}M`;
  if (abs >= 1e4) return `${trim(count / 1e3)}K`;
  return String(count);
}

export function formatNumber(n: number): string {
  return new Intl.NumberFormat('en-US').format(n);
}

/**
 * Dollars to six significant digits, trailing zeros dropped: a price stored as ratios (Gemini 2.5 Flash's output is
 * 0.15 × 8.33333 × 2 = 2.499999) reads as the provider publishes it ($2.5), and no published price needs more.
 */
const usd = new Intl.NumberFormat('en-US', { maximumSignificantDigits: 6, useGrouping: false });

/** A price in dollars as a provider writes it: `$2.5`, `$0.01`, `$0.0000015`. */
export function formatUsd(dollars: number): string {
  return `$${usd.format(dollars)}`;
}

/** A prompt-token threshold as providers write it: 200K, 1M, else the number. */
export function formatThreshold(tokens: number): string {
  if (tokens >= 1_000_000 && tokens % 1_000_000 === 0) return `${tokens / 1_000_000}M`;
  if (tokens >= 1_000 && tokens % 1_000 === 0) return `${tokens / 1_000}K`;
  return formatNumber(tokens);
}

export type TagColor = 'red' | 'orange' | 'blue' | 'green' | 'gray' | 'purple' | 'yellow';

/** Group ratio tag colour: above 5 red, above 3 orange, above 1 blue, otherwise green. */
export function groupRatioColor(ratio: number): TagColor {
  if (ratio > 5) return 'red';
  if (ratio > 3) return 'orange';
  if (ratio > 1) return 'blue';
  return 'green';
}

/** Unix seconds to a local "YYYY-MM-DD HH:mm:ss". */
export function formatTimestamp(seconds: number): string {
  if (!seconds) return '-';
  const d = new Date(seconds * 1000);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}
