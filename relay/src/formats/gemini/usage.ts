/**
 * Gemini usage (https://ai.google.dev/api/generate-content#UsageMetadata): `promptTokenCount` includes
 * `cachedContentTokenCount`; `candidatesTokenCount` does not include `thoughtsTokenCount`, which is billed as
 * output, so completion = candidates + thoughts (reasoning = thoughts). In a stream each chunk may repeat the
 * counts so far; the last one is the total.
 */
import { EMPTY_USAGE, type NormalisedUsage } from '../../metering/usage.ts';
import { isRecord } from '../canonical.ts';

const count = (value: unknown): number =>
  typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0;

export function normaliseGeminiUsage(metadata: unknown): NormalisedUsage | undefined {
  if (!isRecord(metadata)) return undefined;
  const prompt = count(metadata.promptTokenCount) + count(metadata.toolUsePromptTokenCount);
  const thoughts = count(metadata.thoughtsTokenCount);
  const completion = count(metadata.candidatesTokenCount) + thoughts;
  return {
    ...EMPTY_USAGE,
    promptTokens: prompt,
    completionTokens: completion,
    cachedTokens: Math.min(count(metadata.cachedContentTokenCount), prompt),
    reasoningTokens: thoughts,
  };
}

export const geminiUsageOf = (answer: Readonly<Record<string, unknown>>): NormalisedUsage | undefined =>
  normaliseGeminiUsage(answer.usageMetadata);

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
