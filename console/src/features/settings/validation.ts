/** Client-side checks of the settings screens (spec 01 section 5, spec 02 section 5). Return a locale key or null. */

export function isValidJson(text: string): boolean {
  if (text.trim() === '') return true;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** Address settings are saved without trailing slashes. */
export function stripTrailingSlash(value: string): string {
  return value.trim().replace(/\/+$/, '');
}

/** The OIDC well-known address must start with http:// or https://. */
export function validateWellKnown(url: string): string | null {
  if (!url.trim()) return 'oidc.wellKnownRequired';
  if (!/^https?:\/\//i.test(url.trim())) return 'oidc.wellKnownScheme';
  return null;
}

const DOMAIN = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/i;

/** A whitelist entry must be a domain name like gmail.com and not already listed. */
export function validateWhitelistDomain(domain: string, list: readonly string[]): string | null {
  const d = domain.trim().toLowerCase();
  if (!DOMAIN.test(d)) return 'whitelist.invalid';
  if (list.map((x) => x.toLowerCase()).includes(d)) return 'whitelist.duplicate';
  return null;
}

/** Parses a decimal; null when the text is not a finite number. */
export function parseNumber(text: string): number | null {
  if (text.trim() === '') return null;
  const n = Number(text);
  return Number.isFinite(n) ? n : null;
}

/** A numeric field with a lower (and optional upper) bound; `integer` requires whole numbers. */
export function validateNumberField(
  text: string,
  { min, max, integer }: { min?: number; max?: number; integer?: boolean },
): string | null {
  const n = parseNumber(text);
  if (n === null) return 'validation.number';
  if (integer && !Number.isInteger(n)) return 'validation.integer';
  if (min !== undefined && n < min) return 'validation.min';
  if (max !== undefined && n > max) return 'validation.max';
  return null;
}

/** Log clearing needs a chosen time. */
export function validateLogClearTime(value: string): string | null {
  if (!value) return 'logs.timeRequired';
  return Number.isNaN(new Date(value).getTime()) ? 'logs.timeRequired' : null;
}

/** One long-context tier as typed: prompt tokens, and multipliers of the model's prices. */
export interface TierInput {
  above: string;
  input: string;
  output: string;
  /** Empty: the input multiplier. */
  cache: string;
}

/** A row of the visual pricing editor as the admin types it. */
export interface PriceRowInput {
  name: string;
  /** Fixed price per request; when set, the ratios (and tiers) are ignored. */
  price: string;
  ratio: string;
  completionRatio: string;
  longContext?: TierInput[];
  serviceTiers?: { tier: string; ratio: string }[];
  /** USD per web search. */
  webSearch?: string;
  /** USD per image. */
  image?: string;
}

/**
 * Checks a price row: a name, no duplicate (other than the row being edited), numbers only, and a fixed price
 * that is not 0. With a fixed price the ratios are not checked (they are disabled and ignored).
 */
export function validatePriceRow(
  row: PriceRowInput,
  existing: readonly string[],
  editing: string | null,
): string | null {
  const name = row.name.trim();
  if (!name) return 'pricing.nameRequired';
  if (name !== editing && existing.includes(name)) return 'pricing.duplicate';
  const fees = validateFees(row);
  if (fees) return fees;
  if (row.price.trim() !== '') {
    const price = parseNumber(row.price);
    if (price === null) return 'pricing.notNumber';
    if (price === 0) return 'pricing.priceZero';
    return null;
  }
  for (const text of [row.ratio, row.completionRatio]) {
    if (text.trim() !== '' && parseNumber(text) === null) return 'pricing.notNumber';
  }
  if (row.ratio.trim() === '') return 'pricing.ratioRequired';
  for (const tier of row.longContext ?? []) {
    if (![tier.above, tier.input, tier.output].every((text) => text.trim() !== ''))
      return 'pricing.tierIncomplete';
    if (
      [tier.above, tier.input, tier.output, tier.cache].some(
        (t) => t.trim() !== '' && parseNumber(t) === null,
      )
    )
      return 'pricing.notNumber';
  }
  for (const tier of row.serviceTiers ?? []) {
    if (tier.tier.trim() === '' || tier.ratio.trim() === '') return 'pricing.serviceTierIncomplete';
    if (parseNumber(tier.ratio) === null) return 'pricing.notNumber';
  }
  const tierNames = (row.serviceTiers ?? []).map((tier) => tier.tier.trim());
  if (new Set(tierNames).size !== tierNames.length) return 'pricing.serviceTierDuplicate';
  return null;
}

/** The fee fields: empty, or a number. Checked whatever the price kind, since fees apply to both. */
function validateFees(row: PriceRowInput): string | null {
  for (const text of [row.webSearch ?? '', row.image ?? ''])
    if (text.trim() !== '' && parseNumber(text) === null) return 'pricing.notNumber';
  return null;
}

export type BatchMode = 'price' | 'ratio' | 'completion' | 'both';

/** The batch-set dialog of the pricing editor. */
export function validateBatchSet(
  selected: number,
  mode: BatchMode,
  value: string,
  completion: string,
): string | null {
  if (selected === 0) return 'pricing.batchNoSelection';
  if (mode === 'both') {
    if (!value.trim() || !completion.trim()) return 'pricing.batchBothRequired';
    if (parseNumber(value) === null || parseNumber(completion) === null) return 'pricing.batchInvalid';
    return null;
  }
  if (!value.trim()) return 'pricing.batchValueRequired';
  if (parseNumber(value) === null) return 'pricing.batchInvalid';
  return null;
}

/** A model's per-token price in dollars per 1M tokens: ratio 1 is $2. */
export function ratioToTokenPrice(ratio: number): number {
  return ratio * 2;
}
