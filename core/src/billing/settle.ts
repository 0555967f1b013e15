/**
 * Settlement (reference §5.4): the quota a finished request costs, from its normalised usage and its pricing.
 *
 * Two reference bugs are fixed here (reference §5.4 notes, §10 "Billing accuracy"; docs/adr/0006):
 *
 * 1. **Cache tokens counted twice / dropped on the Claude-via-OpenAI path.** The reference converts Anthropic
 *    usage to OpenAI shape with `prompt = input_tokens` (which *excludes* cache reads and writes) and then the
 *    text formula subtracts the cached tokens from the prompt again, under-charging; cache-write tokens are
 *    ignored entirely on that path. Here usage has one canonical shape ({@link TokenUsage}: the prompt
 *    *includes* cache reads and writes, whatever the upstream's semantics — relay/src/metering normalises it)
 *    and one formula bills uncached input, cache reads and cache writes each exactly once, on every path.
 * 2. **Ratio-priced image models settled with the token formula.** The reference pre-checks an image request
 *    at `0.0025 × modelRatio × size × quality × n` USD but settles it as `n` prompt tokens × ratio, a different
 *    and much smaller amount. Here {@link imageQuota} is the one price for both the check and the settlement.
 *
 * Also unlike the reference, every formula rounds half up (the reference rounds the text path and truncates the
 * Claude path), so one request costs the same whichever endpoint it came through.
 */

import { BATCH_SERVICE_TIER, DEFAULT_BATCH_RATIO, type LongContextTier } from './price-shapes.ts';
import { roundQuota } from './quota-math.ts';
import { AUDIO_COMPLETION_RATIO, type PriceShapes, type Pricing } from './ratios.ts';

/** Token usage in the canonical shape. Every count is a whole number ≥ 0. */
export interface TokenUsage {
  /** All input tokens, cache reads and cache writes included (OpenAI semantics). */
  readonly promptTokens: number;
  readonly completionTokens: number;
  /** Input tokens served from the provider's prompt cache (⊂ promptTokens). */
  readonly cachedTokens?: number;
  /** Input tokens written to the provider's prompt cache (⊂ promptTokens; Anthropic's cache creation). */
  readonly cacheWriteTokens?: number;
  /**
   * The cache writes Anthropic keeps for 1 hour (⊂ cacheWriteTokens), billed at `cacheCreation1hRatio`; the rest
   * of the writes are 5-minute ones (and every write of a provider that does not say how long it keeps them).
   */
  readonly cacheWrite1hTokens?: number;
  /** Audio input tokens (⊂ promptTokens). */
  readonly audioInputTokens?: number;
  /** Audio output tokens (⊂ completionTokens). */
  readonly audioOutputTokens?: number;
  /**
   * The service tier the answer says it was served at, as it says it (OpenAI's `priority`, `flex`, `default`;
   * Anthropic's `standard`, `priority`); what the request asked for does not count.
   */
  readonly serviceTier?: string | undefined;
  /**
   * Web searches the provider bills per search: Anthropic's `server_tool_use.web_search_requests`, OpenAI's web
   * search calls, Gemini's grounded prompts (2.x) or search queries (3).
   */
  readonly webSearchCalls?: number;
  /** Images produced, where the provider prices images per image and the answer says how many. */
  readonly imageCount?: number;
}

/**
 * What a model's price shapes changed in a bill (absent fields did not apply), so the consume log can say it and a
 * user can redo the sum by hand.
 */
export interface AppliedShapes {
  /** The long-context tier the prompt passed. */
  readonly tier?: LongContextTier;
  /** The service tier the answer reported, when the model has a multiplier for it. */
  readonly serviceTier?: string;
  readonly serviceTierRatio?: number;
  readonly webSearchCalls?: number;
  /** USD per search. */
  readonly webSearchPrice?: number;
  readonly imageCount?: number;
  /** USD per image. */
  readonly imagePrice?: number;
  /** The fees in quota, before the group ratio. */
  readonly feesQuota?: number;
}

/** The amount and the figures behind it, for the consume log's `other` field. */
export interface Settlement {
  readonly quota: number;
  /** No tokens at all: nothing is charged, and the request is not counted (reference: "maybe upstream timeout"). */
  readonly isEmpty: boolean;
  /** The bill was raised to 1 because a priced request must never be free (the minimum-1 rule). */
  readonly isMinimumApplied: boolean;
  /** The price shapes that applied; absent when none did. */
  readonly shapes?: AppliedShapes;
}

const count = (value: number | undefined): number => {
  const n = value ?? 0;
  if (!Number.isFinite(n) || n < 0) throw new RangeError(`token count must be a number ≥ 0, got ${value}`);
  return n;
};

/**
 * The long-context tier a prompt reaches: the one with the highest `above` the prompt passes (cache reads and
 * writes are part of the prompt), or undefined below every tier.
 */
export function longContextTierOf(
  tiers: readonly LongContextTier[] | undefined,
  promptTokens: number,
): LongContextTier | undefined {
  let reached: LongContextTier | undefined;
  for (const tier of tiers ?? [])
    if (promptTokens > tier.above && (reached === undefined || tier.above > reached.above)) reached = tier;
  return reached;
}

/** The model's multiplier for a service tier, or undefined when it has none for it (the tier costs 1). */
export function serviceTierRatioOf(
  serviceTiers: PriceShapes['serviceTiers'],
  serviceTier: string | undefined,
): number | undefined {
  if (serviceTiers === undefined || serviceTier === undefined) return undefined;
  return Object.hasOwn(serviceTiers, serviceTier) ? serviceTiers[serviceTier] : undefined;
}

/** The per-request fees of a usage (`RequestFees`), in quota before the group ratio, and what they were. */
function feesOf(fees: PriceShapes['fees'], usage: TokenUsage, quotaPerUnit: number): AppliedShapes {
  const searches = count(usage.webSearchCalls);
  const images = count(usage.imageCount);
  const searchPrice = searches > 0 ? fees?.web_search : undefined;
  const imagePrice = images > 0 ? fees?.image : undefined;
  if (searchPrice === undefined && imagePrice === undefined) return {};
  const usd = searches * (searchPrice ?? 0) + images * (imagePrice ?? 0);
  return {
    ...(searchPrice === undefined ? {} : { webSearchCalls: searches, webSearchPrice: searchPrice }),
    ...(imagePrice === undefined ? {} : { imageCount: images, imagePrice }),
    feesQuota: usd * quotaPerUnit,
  };
}

/** The shapes as a Settlement field: absent when nothing applied. */
const appliedOrNone = (shapes: AppliedShapes): { shapes?: AppliedShapes } =>
  Object.keys(shapes).length === 0 ? {} : { shapes };

/**
 * Text, embeddings, rerank, moderation, TTS and STT requests (and chat with cache tokens from any provider), with
 * the model's price shapes (docs/adr/0042):
 *
 * ```
 * uncached = prompt − cached − cacheWrite,  cacheWrite5m = cacheWrite − cacheWrite1h
 * tier     = the long-context tier with the highest `above` < prompt, if any
 * inM, outM, cacheM = tier.input, tier.output, tier.cache ?? tier.input     (1 without a tier)
 * st       = ServiceTierRatio[model][the answer's service tier] ?? 1
 * tokens   = (uncached × inM + cached × cacheRatio × cacheM + cacheWrite5m × cacheCreationRatio × cacheM
 *             + cacheWrite1h × cacheCreation1hRatio × cacheM + completion × completionRatio × outM) × modelRatio × st
 * fees     = (webSearchCalls × fee.web_search + imageCount × fee.image) × QuotaPerUnit
 * quota    = round((tokens + fees) × groupRatio)
 * quota    = 1 when it rounds to 0 but modelRatio × groupRatio ≠ 0      (minimum-1 rule)
 * per-call: round((modelPrice × QuotaPerUnit + fees) × groupRatio)      (no tier, no service tier)
 * prompt + completion = 0 → 0, and the request is flagged empty      (upstream sent nothing)
 * ```
 *
 * Cached and cache-write counts larger than the prompt (an upstream reporting them outside the prompt) are
 * clamped, so no input token is ever billed at a negative count. Without shapes every product is the one it was
 * before them (a multiplication by 1 and an addition of 0 are exact), so no existing bill moves by a unit.
 */
export function settleTokens(pricing: Pricing, usage: TokenUsage, quotaPerUnit: number): Settlement {
  const prompt = count(usage.promptTokens);
  const completion = count(usage.completionTokens);
  if (prompt + completion === 0) return { quota: 0, isEmpty: true, isMinimumApplied: false };
  const fees = feesOf(pricing.shapes?.fees, usage, quotaPerUnit);
  const feesQuota = fees.feesQuota ?? 0;
  if (pricing.kind === 'per-call') {
    return {
      quota: roundQuota((pricing.modelPrice * quotaPerUnit + feesQuota) * pricing.groupRatio),
      isEmpty: false,
      isMinimumApplied: false,
      ...appliedOrNone(fees),
    };
  }
  const tier = longContextTierOf(pricing.shapes?.longContextTiers, prompt);
  const inM = tier?.input ?? 1;
  const outM = tier?.output ?? 1;
  const cacheM = tier?.cache ?? inM;
  const serviceTierRatio = serviceTierRatioOf(pricing.shapes?.serviceTiers, usage.serviceTier);
  const cached = Math.min(count(usage.cachedTokens), prompt);
  const cacheWrite = Math.min(count(usage.cacheWriteTokens), prompt - cached);
  const cacheWrite1h = Math.min(count(usage.cacheWrite1hTokens), cacheWrite);
  const uncached = prompt - cached - cacheWrite;
  const weighted =
    uncached * inM +
    cached * pricing.cacheRatio * cacheM +
    (cacheWrite - cacheWrite1h) * pricing.cacheCreationRatio * cacheM +
    cacheWrite1h * pricing.cacheCreation1hRatio * cacheM +
    completion * pricing.completionRatio * outM;
  const tokens = weighted * pricing.modelRatio * (serviceTierRatio ?? 1);
  const settled = withMinimum(roundQuota((tokens + feesQuota) * pricing.groupRatio), pricing);
  const shapes: AppliedShapes = {
    ...(tier === undefined ? {} : { tier }),
    ...(serviceTierRatio === undefined ? {} : { serviceTier: usage.serviceTier, serviceTierRatio }),
    ...fees,
  };
  return { ...settled, ...appliedOrNone(shapes) };
}

/**
 * A line a provider's Batch API served (docs/adr/0050): billed at the model's `batch` service tier
 * ({@link BATCH_SERVICE_TIER}: `ServiceTierRatio[model].batch`, else {@link DEFAULT_BATCH_RATIO}); a per-call price
 * is multiplied by the same ratio. The usage's own service tier is replaced: the batch price is the price.
 */
export function settleBatchTokens(pricing: Pricing, usage: TokenUsage, quotaPerUnit: number): Settlement {
  return settleTokens(batchPricingOf(pricing), { ...usage, serviceTier: BATCH_SERVICE_TIER }, quotaPerUnit);
}

/** The pricing with the batch multiplier made explicit (per-token: a `batch` service tier; per-call: the price). */
export function batchPricingOf(pricing: Pricing): Pricing {
  if (pricing.kind === 'per-call')
    return { ...pricing, modelPrice: pricing.modelPrice * DEFAULT_BATCH_RATIO };
  const tiers = pricing.shapes?.serviceTiers;
  if (tiers !== undefined && Object.hasOwn(tiers, BATCH_SERVICE_TIER)) return pricing;
  return {
    ...pricing,
    shapes: { ...pricing.shapes, serviceTiers: { ...tiers, [BATCH_SERVICE_TIER]: DEFAULT_BATCH_RATIO } },
  };
}

/**
 * The consume log's names for what the price shapes did (the console's log details show them): the tier's
 * threshold and multipliers, the service tier and its multiplier, each fee's count and USD price, and the fees'
 * quota before the group ratio. A shape that did not apply has no key.
 */
export function shapeLogFields(shapes: AppliedShapes | undefined): Record<string, number | string> {
  if (shapes === undefined) return {};
  const fields: Record<string, number | string> = {};
  const { tier } = shapes;
  if (tier) {
    fields.long_context_above = tier.above;
    fields.long_context_input_ratio = tier.input;
    fields.long_context_output_ratio = tier.output;
    fields.long_context_cache_ratio = tier.cache ?? tier.input;
  }
  if (shapes.serviceTier !== undefined && shapes.serviceTierRatio !== undefined) {
    fields.service_tier = shapes.serviceTier;
    fields.service_tier_ratio = shapes.serviceTierRatio;
  }
  if (shapes.webSearchCalls !== undefined && shapes.webSearchPrice !== undefined) {
    fields.web_search_calls = shapes.webSearchCalls;
    fields.web_search_price = shapes.webSearchPrice;
  }
  if (shapes.imageCount !== undefined && shapes.imagePrice !== undefined) {
    fields.image_count = shapes.imageCount;
    fields.image_price = shapes.imagePrice;
  }
  // Six decimals: a fee of 3 × $0.01 is 15000, not 15000.000000000002.
  if (shapes.feesQuota !== undefined) fields.fees_quota = Number(shapes.feesQuota.toFixed(6));
  return fields;
}

/**
 * Audio models (`gpt-4o-audio*` via chat, and realtime), where audio tokens cost more than text ones:
 *
 * ```
 * quota = round((textIn + textOut × completionRatio + audioIn × audioRatio
 *                + audioOut × audioRatio × audioCompletionRatio) × modelRatio × groupRatio), minimum 1
 * ```
 * with `textIn = prompt − audioIn`, `textOut = completion − audioOut`. Cache reads of audio models are billed
 * like text input (the reference ignores them on this path too; audio models have no cache price by default).
 */
export function settleAudio(
  pricing: Pricing,
  usage: TokenUsage,
  audioRatio: number,
  quotaPerUnit: number,
  audioCompletionRatio: number = AUDIO_COMPLETION_RATIO,
): Settlement {
  const prompt = count(usage.promptTokens);
  const completion = count(usage.completionTokens);
  if (prompt + completion === 0) return { quota: 0, isEmpty: true, isMinimumApplied: false };
  if (pricing.kind === 'per-call') return settleTokens(pricing, usage, quotaPerUnit);
  const audioIn = Math.min(count(usage.audioInputTokens), prompt);
  const audioOut = Math.min(count(usage.audioOutputTokens), completion);
  const weighted =
    prompt -
    audioIn +
    (completion - audioOut) * pricing.completionRatio +
    audioIn * audioRatio +
    audioOut * audioRatio * audioCompletionRatio;
  return withMinimum(roundQuota(weighted * pricing.modelRatio * pricing.groupRatio), pricing);
}

function withMinimum(quota: number, pricing: Pricing & { kind: 'per-token' }): Settlement {
  const ratio = pricing.modelRatio * pricing.groupRatio;
  if (ratio !== 0 && quota <= 0) return { quota: 1, isEmpty: false, isMinimumApplied: true };
  return { quota, isEmpty: false, isMinimumApplied: false };
}

/** USD per image of a ratio-priced image model at ratio 1 ("ratio 16 = $0.04", reference §5.4). */
export const IMAGE_USD_PER_RATIO = 0.0025;

/** Price multiplier by image size; sizes not listed cost 1. */
export const IMAGE_SIZE_RATIO: Readonly<Record<string, number>> = {
  '256x256': 0.4,
  '512x512': 0.45,
  '1024x1024': 1,
  '1024x1792': 2,
  '1792x1024': 2,
};

export interface ImageRequest {
  readonly model: string;
  readonly size?: string | undefined;
  readonly quality?: string | undefined;
  /** Number of images (`n`, default 1). */
  readonly n?: number | undefined;
}

/** The dall-e-3 `hd` surcharge: 2× at 1024x1024, 1.5× at the two large sizes. */
export function imageQualityRatio(request: ImageRequest): number {
  if (request.model !== 'dall-e-3' || request.quality !== 'hd') return 1;
  return request.size === '1024x1792' || request.size === '1792x1024' ? 1.5 : 2;
}

/**
 * The quota of an image generation, used for both the balance check before the call and the settlement after it
 * (fixes reference bug 2, see the file comment):
 *
 * ```
 * usd = (modelPrice, or 0.0025 × modelRatio) × sizeRatio × qualityRatio × n
 * quota = round(usd × groupRatio × QuotaPerUnit), minimum 1 when the price is not 0
 * ```
 */
export function imageQuota(pricing: Pricing, request: ImageRequest, quotaPerUnit: number): number {
  const n = request.n ?? 1;
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`image count must be a whole number ≥ 1, got ${n}`);
  const unitUsd = pricing.kind === 'per-call' ? pricing.modelPrice : IMAGE_USD_PER_RATIO * pricing.modelRatio;
  const sizeRatio = (request.size ? IMAGE_SIZE_RATIO[request.size] : undefined) ?? 1;
  const usd = unitUsd * sizeRatio * imageQualityRatio(request) * n;
  const quota = roundQuota(usd * pricing.groupRatio * quotaPerUnit);
  return quota === 0 && usd * pricing.groupRatio !== 0 ? 1 : quota;
}
