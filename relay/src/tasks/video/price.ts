/**
 * What a video costs (docs/adr/0033): `ModelPrice` of a video model is read as USD per second of output at the
 * 720p tier; a larger frame costs the 720p price × {@link HIGH_RES_FACTOR}, OpenAI's own step from $0.30 to $0.50
 * a second for sora-2-pro at 1024x1792 / 1792x1024. A submit holds and charges the requested length; the clip's
 * real length settles it (a shorter clip gets the difference back, once).
 */

/** Price step above 720p (OpenAI: sora-2-pro $0.50 / $0.30 a second). */
export const HIGH_RES_FACTOR = 5 / 3;

/** Models whose provider prices by resolution tier (OpenAI's Sora); Veo costs the same at 720p and 1080p. */
const isTiered = (model: string): boolean => /^sora-/.test(model);

/**
 * 1 for frames up to 1280 pixels on their long side (720p), {@link HIGH_RES_FACTOR} above, for the models priced
 * by tier; 1 for the others.
 */
export function sizeTierFactor(model: string, size: string): number {
  if (!isTiered(model)) return 1;
  const [width = 0, height = 0] = size.split('x').map(Number);
  return Math.max(width, height) > 1280 ? HIGH_RES_FACTOR : 1;
}

/**
 * Quota per second of output: the model's price per second × the group ratio × the size tier, in quota units
 * (not yet truncated, so a length × it is truncated once).
 */
export function perSecondQuota(input: {
  model: string;
  modelPrice: number;
  groupRatio: number;
  size: string;
  quotaPerUnit: number;
}): number {
  return input.modelPrice * input.groupRatio * sizeTierFactor(input.model, input.size) * input.quotaPerUnit;
}

/**
 * Quota of `seconds` of output, truncated once; binary fractions are rounded off first, so $0.30 × 5/3 × 3 s is
 * 750,000, not the 749,999 that 0.49999999999999994 would truncate to.
 */
export const quotaForSeconds = (perSecond: number, seconds: number): number =>
  Math.trunc(Number((perSecond * Math.max(0, seconds)).toFixed(6)));

/**
 * What to give back once the clip's real length is known: the charge minus the real length's price, never
 * negative (a clip longer than asked is not charged more than was held).
 */
export function refundForLength(charged: number, perSecond: number, realSeconds: number | undefined): number {
  if (realSeconds === undefined) return 0;
  return Math.max(0, charged - quotaForSeconds(perSecond, realSeconds));
}
