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

import { roundQuota } from './quota-math.ts';
import { AUDIO_COMPLETION_RATIO, type Pricing } from './ratios.ts';

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
}

/** The amount and the figures behind it, for the consume log's `other` field. */
export interface Settlement {
  readonly quota: number;
  /** No tokens at all: nothing is charged, and the request is not counted (reference: "maybe upstream timeout"). */
  readonly isEmpty: boolean;
  /** The bill was raised to 1 because a priced request must never be free (the minimum-1 rule). */
  readonly isMinimumApplied: boolean;
}

const count = (value: number | undefined): number => {
  const n = value ?? 0;
  if (!Number.isFinite(n) || n < 0) throw new RangeError(`token count must be a number ≥ 0, got ${value}`);
  return n;
};

/** Per-call price: `round(modelPrice × QuotaPerUnit × groupRatio)`. */
export function perCallQuota(modelPrice: number, groupRatio: number, quotaPerUnit: number): number {
  return roundQuota(modelPrice * quotaPerUnit * groupRatio);
}

/**
 * Text, embeddings, rerank, moderation, TTS and STT requests (and chat with cache tokens from any provider):
 *
 * ```
 * uncached = prompt − cached − cacheWrite,  cacheWrite5m = cacheWrite − cacheWrite1h
 * quota = round((uncached + cached × cacheRatio + cacheWrite5m × cacheCreationRatio
 *                + cacheWrite1h × cacheCreation1hRatio
 *                + completion × completionRatio) × modelRatio × groupRatio)
 * quota = 1 when it rounds to 0 but modelRatio × groupRatio ≠ 0      (minimum-1 rule)
 * per-call: round(modelPrice × QuotaPerUnit × groupRatio)
 * prompt + completion = 0 → 0, and the request is flagged empty      (upstream sent nothing)
 * ```
 *
 * Cached and cache-write counts larger than the prompt (an upstream reporting them outside the prompt) are
 * clamped, so no input token is ever billed at a negative count.
 */
export function settleTokens(pricing: Pricing, usage: TokenUsage, quotaPerUnit: number): Settlement {
  const prompt = count(usage.promptTokens);
  const completion = count(usage.completionTokens);
  if (prompt + completion === 0) return { quota: 0, isEmpty: true, isMinimumApplied: false };
  if (pricing.kind === 'per-call') {
    return {
      quota: perCallQuota(pricing.modelPrice, pricing.groupRatio, quotaPerUnit),
      isEmpty: false,
      isMinimumApplied: false,
    };
  }
  const cached = Math.min(count(usage.cachedTokens), prompt);
  const cacheWrite = Math.min(count(usage.cacheWriteTokens), prompt - cached);
  const cacheWrite1h = Math.min(count(usage.cacheWrite1hTokens), cacheWrite);
  const uncached = prompt - cached - cacheWrite;
  const weighted =
    uncached +
    cached * pricing.cacheRatio +
    (cacheWrite - cacheWrite1h) * pricing.cacheCreationRatio +
    cacheWrite1h * pricing.cacheCreation1hRatio +
    completion * pricing.completionRatio;
  return withMinimum(roundQuota(weighted * pricing.modelRatio * pricing.groupRatio), pricing);
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
