/**
 * Anthropic usage (https://docs.anthropic.com/en/api/messages, `usage`): `input_tokens` excludes the cache,
 * `cache_read_input_tokens` and `cache_creation_input_tokens` are beside it, `output_tokens` includes thinking.
 * In a stream, `message_start` carries the input side and `message_delta` the (cumulative) output side.
 */
import type { NormalisedUsage } from '../../contract.ts';
import { mergeAnthropicUsage, normaliseAnthropicUsage } from '../../metering/usage.ts';

export const anthropicUsageOf = (answer: Readonly<Record<string, unknown>>): NormalisedUsage | undefined =>
  normaliseAnthropicUsage(answer.usage);

/** Keeps the raw usage of a stream across its events. */
export function createAnthropicUsageTracker() {
  let raw: Record<string, unknown> | undefined;
  return {
    add(usage: unknown) {
      raw = mergeAnthropicUsage(raw, usage);
    },
    current: (): NormalisedUsage | undefined =>
      raw === undefined ? undefined : normaliseAnthropicUsage(raw),
  };
}

/** The client-facing Anthropic `usage` of a normalised usage (input without the cache, as Anthropic counts it). */
export function toAnthropicUsage(usage: NormalisedUsage): Record<string, unknown> {
  return {
    input_tokens: Math.max(usage.promptTokens - usage.cachedTokens - usage.cacheWriteTokens, 0),
    cache_creation_input_tokens: usage.cacheWriteTokens,
    cache_creation: {
      ephemeral_5m_input_tokens: usage.cacheWriteTokens - usage.cacheWrite1hTokens,
      ephemeral_1h_input_tokens: usage.cacheWrite1hTokens,
    },
    cache_read_input_tokens: usage.cachedTokens,
    output_tokens: usage.completionTokens,
    // What else the upstream reported and billed: the searches it ran and the tier it served at.
    ...(usage.webSearchCalls ? { server_tool_use: { web_search_requests: usage.webSearchCalls } } : {}),
    ...(usage.serviceTier === undefined ? {} : { service_tier: usage.serviceTier }),
  };
}
