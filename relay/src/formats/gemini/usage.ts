/**
 * Gemini usage (https://ai.google.dev/api/generate-content#UsageMetadata): `promptTokenCount` includes
 * `cachedContentTokenCount`; `candidatesTokenCount` does not include `thoughtsTokenCount`, which is billed as
 * output, so completion = candidates + thoughts (reasoning = thoughts). In a stream each chunk may repeat the
 * counts so far; the last one is the total.
 *
 * Beside the tokens (docs/adr/0042):
 * - Grounding with Google Search: a candidate's `groundingMetadata` with the queries it ran (`webSearchQueries`) or
 *   the results it used (`groundingChunks`). Google bills Gemini 3 per search query and the 2.x models per grounded
 *   prompt (https://ai.google.dev/gemini-api/docs/pricing, "Grounding with Google Search"), so a Gemini 3 answer
 *   counts its queries and any other one search per grounded answer.
 * - The service tier: Vertex AI reports it in `usageMetadata.trafficType` (`ON_DEMAND`, `ON_DEMAND_PRIORITY`,
 *   `ON_DEMAND_FLEX`, `PROVISIONED_THROUGHPUT`), read as `standard`, `priority`, `flex`, `provisioned`; the Gemini API
 *   says it only in the `x-gemini-service-tier` response header (https://ai.google.dev/gemini-api/docs/priority-inference),
 *   which {@link geminiServiceTierOf} reads.
 * - Images: `inlineData` parts of an image type, one image each.
 */

import type { IncomingHttpHeaders } from 'node:http';
import type { NormalisedUsage } from '../../contract.ts';
import { EMPTY_USAGE, serviceTierField } from '../../metering/usage.ts';
import { isRecord } from '../canonical.ts';

const count = (value: unknown): number =>
  typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0;

/** Vertex AI's traffic types under the names the other providers use for the same tiers. */
const TRAFFIC_TIERS: Readonly<Record<string, string>> = {
  ON_DEMAND: 'standard',
  ON_DEMAND_PRIORITY: 'priority',
  ON_DEMAND_FLEX: 'flex',
  PROVISIONED_THROUGHPUT: 'provisioned',
};

export function normaliseGeminiUsage(metadata: unknown): NormalisedUsage | undefined {
  if (!isRecord(metadata)) return undefined;
  const prompt = count(metadata.promptTokenCount) + count(metadata.toolUsePromptTokenCount);
  const thoughts = count(metadata.thoughtsTokenCount);
  const completion = count(metadata.candidatesTokenCount) + thoughts;
  const tier = typeof metadata.trafficType === 'string' ? TRAFFIC_TIERS[metadata.trafficType] : undefined;
  return {
    ...EMPTY_USAGE,
    promptTokens: prompt,
    completionTokens: completion,
    cachedTokens: Math.min(count(metadata.cachedContentTokenCount), prompt),
    reasoningTokens: thoughts,
    ...serviceTierField(tier),
  };
}

/**
 * What a Gemini answer (or the chunks of a stream so far) shows of searches and images: whether it was grounded,
 * the distinct queries it ran, and the images among its parts.
 */
export class GeminiCharges {
  private grounded = false;
  private readonly queries = new Set<string>();
  private images = 0;

  /** Reads one `GenerateContentResponse` (an answer, or one chunk of a stream: its parts are new ones). */
  add(answer: Readonly<Record<string, unknown>>): void {
    for (const candidate of Array.isArray(answer.candidates) ? answer.candidates : []) {
      if (!isRecord(candidate)) continue;
      const grounding = candidate.groundingMetadata;
      if (isRecord(grounding)) {
        const queries = Array.isArray(grounding.webSearchQueries) ? grounding.webSearchQueries : [];
        for (const query of queries) if (typeof query === 'string') this.queries.add(query);
        if (
          queries.length > 0 ||
          (Array.isArray(grounding.groundingChunks) && grounding.groundingChunks.length > 0)
        )
          this.grounded = true;
      }
      const parts =
        isRecord(candidate.content) && Array.isArray(candidate.content.parts) ? candidate.content.parts : [];
      for (const part of parts) {
        const data = isRecord(part) ? part.inlineData : undefined;
        if (isRecord(data) && typeof data.mimeType === 'string' && data.mimeType.startsWith('image/'))
          this.images += 1;
      }
    }
  }

  /** `usage` with the searches the model bills (see the file comment) and the images. */
  applyTo(usage: NormalisedUsage, model: string): NormalisedUsage {
    const searches = !this.grounded ? 0 : /^gemini-3/.test(model) ? this.queries.size : 1;
    if (searches === 0 && this.images === 0) return usage;
    return {
      ...usage,
      ...(searches > 0 ? { webSearchCalls: searches } : {}),
      ...(this.images > 0 ? { imageCount: this.images } : {}),
    };
  }
}

/** The model that answered: the answer's `modelVersion`, else the one asked for. */
export const geminiModelOf = (answer: Readonly<Record<string, unknown>>, asked: string): string =>
  typeof answer.modelVersion === 'string' && answer.modelVersion !== '' ? answer.modelVersion : asked;

/** The usage of a whole Gemini answer, with its searches and images; `model` when the answer names none. */
export function geminiUsageOf(
  answer: Readonly<Record<string, unknown>>,
  model = '',
): NormalisedUsage | undefined {
  const usage = normaliseGeminiUsage(answer.usageMetadata);
  if (usage === undefined) return undefined;
  const charges = new GeminiCharges();
  charges.add(answer);
  return charges.applyTo(usage, geminiModelOf(answer, model));
}

/** The service tier the Gemini API names in its `x-gemini-service-tier` response header, if any. */
export function geminiServiceTierOf(headers: IncomingHttpHeaders): string | undefined {
  return serviceTierField(headers['x-gemini-service-tier']).serviceTier;
}

/** `usageMetadata` for a Gemini client. */
export function toGeminiUsage(usage: NormalisedUsage): Record<string, number> {
  const out: Record<string, number> = {
    promptTokenCount: usage.promptTokens,
    candidatesTokenCount: usage.completionTokens - usage.reasoningTokens,
    totalTokenCount: usage.promptTokens + usage.completionTokens,
  };
  if (usage.cachedTokens > 0) out.cachedContentTokenCount = usage.cachedTokens;
  if (usage.reasoningTokens > 0) out.thoughtsTokenCount = usage.reasoningTokens;
  return out;
}
