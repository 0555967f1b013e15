/**
 * What a video costs (docs/adr/0033): `ModelPrice` of a video model is read as USD per second of output at the
 * 720p tier; a larger frame costs the 720p price × {@link HIGH_RES_FACTOR}, OpenAI's own step from $0.30 to $0.50
 * a second for sora-2-pro at 1024x1792 / 1792x1024. A submit holds and charges the requested length; the clip's
 * real length settles it (a shorter clip gets the difference back, once).
 */

/** Price step above 720p (OpenAI: sora-2-pro $0.50 / $0.30 a second). */
export const HIGH_RES_FACTOR = 5 / 3;

/**
 * Seedance's step from 720p to 1080p: Ark prices its video by tokens, `width × height × fps × seconds / 1024`, so a
 * 1920x1088 second costs what 2.38 seconds of 1248x704 do (https://www.volcengine.com/docs/82379/1544106).
 */
export const SEEDANCE_1080P_FACTOR = (1920 * 1088) / (1248 * 704);

/**
 * The price step above 720p of the models priced by resolution tier (OpenAI's Sora; Doubao Seedance, which the
 * relay asks for 1080p above 1280 pixels); Veo costs the same at 720p and 1080p, Jimeng names its 1080p tier as a
 * model of its own, and Kling and Vidu are asked for their default resolution.
 */
function highResFactorOf(model: string): number {
  if (/^sora-/.test(model)) return HIGH_RES_FACTOR;
  if (/seedance/.test(model)) return SEEDANCE_1080P_FACTOR;
  return 1;
}

/** 1 for frames up to 1280 pixels on their long side (720p), the model's step above (1 for untiered models). */
export function sizeTierFactor(model: string, size: string): number {
  const factor = highResFactorOf(model);
  if (factor === 1) return 1;
  const [width = 0, height = 0] = size.split('x').map(Number);
  return Math.max(width, height) > 1280 ? factor : 1;
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
