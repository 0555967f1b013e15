/**
 * Usage normalisation: every provider's usage report becomes one {@link NormalisedUsage}, the shape billing
 * (`@turnpike/core/billing/settle`) settles. The rule that matters for money: `promptTokens` always *includes*
 * cache reads and cache writes (OpenAI semantics). Anthropic reports input *excluding* them, and the reference
 * mixed the two up (docs/adr/0006-billing-fixes.md), so each converter below states which semantics it reads.
 */

import { isRecord } from '@turnpike/core/json';
import type { NormalisedUsage } from '../contract.ts';

export const EMPTY_USAGE: NormalisedUsage = Object.freeze({
  promptTokens: 0,
  completionTokens: 0,
  cachedTokens: 0,
  cacheWriteTokens: 0,
  cacheWrite1hTokens: 0,
  audioInputTokens: 0,
  audioOutputTokens: 0,
  reasoningTokens: 0,
  source: 'upstream',
});

/** A whole token count ≥ 0 from an untrusted field; anything else is 0. */
const tokens = (value: unknown): number =>
  typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0;

const field = (object: unknown, key: string): unknown => (isRecord(object) ? object[key] : undefined);

/**
 * OpenAI usage, from chat completions (`prompt_tokens`, `completion_tokens`, `prompt_tokens_details`,
 * `completion_tokens_details`) or the Responses API (`input_tokens`, `output_tokens`, `*_details`), and the
 * OpenAI-compatible variants: DeepSeek `prompt_cache_hit_tokens`, and providers that put `cached_tokens` at the
 * top level. Returns undefined when there is no usage object at all.
 */
export function normaliseOpenAiUsage(usage: unknown): NormalisedUsage | undefined {
  if (!isRecord(usage)) return undefined;
  const promptDetails = usage.prompt_tokens_details ?? usage.input_tokens_details;
  const completionDetails = usage.completion_tokens_details ?? usage.output_tokens_details;
  const promptTokens = tokens(usage.prompt_tokens ?? usage.input_tokens);
  const completionTokens = tokens(usage.completion_tokens ?? usage.output_tokens);
  const cached =
    tokens(field(promptDetails, 'cached_tokens')) ||
    tokens(usage.prompt_cache_hit_tokens) ||
    tokens(usage.cached_tokens);
  return {
    promptTokens,
    completionTokens,
    cachedTokens: Math.min(cached, promptTokens),
    // OpenAI-compatible gateways in front of Anthropic sometimes pass the write count through.
    cacheWriteTokens: Math.min(
      tokens(field(promptDetails, 'cache_creation_tokens') ?? usage.cache_creation_input_tokens),
      Math.max(promptTokens - cached, 0),
    ),
    cacheWrite1hTokens: 0,
    audioInputTokens: Math.min(tokens(field(promptDetails, 'audio_tokens')), promptTokens),
    audioOutputTokens: Math.min(tokens(field(completionDetails, 'audio_tokens')), completionTokens),
    reasoningTokens: Math.min(tokens(field(completionDetails, 'reasoning_tokens')), completionTokens),
    source: 'upstream',
  };
}

/**
 * Anthropic Messages usage (`input_tokens` *excluding* cache, `cache_read_input_tokens`,
 * `cache_creation_input_tokens`, `output_tokens`). In a stream, `message_start` and `message_delta` each carry
 * part of it: merge them with {@link mergeAnthropicUsage} first.
 *
 * Cache writes by duration (https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching, "Tracking cache
 * performance"): `cache_creation.ephemeral_5m_input_tokens` and `ephemeral_1h_input_tokens` split
 * `cache_creation_input_tokens`. An answer without the split (older API versions, Bedrock, gateways in between)
 * wrote 5-minute caches only, the one duration there was.
 *
 * Beside the tokens (https://docs.anthropic.com/en/api/messages, `usage`): `service_tier` (`standard`, `priority`,
 * `batch`) and `server_tool_use.web_search_requests`, the searches Anthropic bills per search (docs/adr/0042).
 */
export function normaliseAnthropicUsage(usage: unknown): NormalisedUsage | undefined {
  if (!isRecord(usage)) return undefined;
  const read = tokens(usage.cache_read_input_tokens);
  const byDuration = usage.cache_creation;
  const write5m = tokens(field(byDuration, 'ephemeral_5m_input_tokens'));
  const write1h = tokens(field(byDuration, 'ephemeral_1h_input_tokens'));
  const write = Math.max(tokens(usage.cache_creation_input_tokens), write5m + write1h);
  const searches = tokens(field(usage.server_tool_use, 'web_search_requests'));
  return {
    ...EMPTY_USAGE,
    promptTokens: tokens(usage.input_tokens) + read + write,
    completionTokens: tokens(usage.output_tokens),
    cachedTokens: read,
    cacheWriteTokens: write,
    cacheWrite1hTokens: write1h,
    ...serviceTierField(usage.service_tier),
    ...(searches > 0 ? { webSearchCalls: searches } : {}),
  };
}

/** A service tier as an answer names it (a short lower-case word), or nothing for anything else. */
export const serviceTierField = (value: unknown): { serviceTier?: string } =>
  typeof value === 'string' && /^[a-z0-9_-]{1,32}$/.test(value) ? { serviceTier: value } : {};

/**
 * The positive counts and the non-empty words (`service_tier`) of `later` over those of `earlier`, one level of
 * nested objects (`cache_creation`, `server_tool_use`) deep.
 */
function mergePositive(earlier: unknown, later: unknown, depth: number): Record<string, unknown> {
  const out: Record<string, unknown> = isRecord(earlier) ? { ...earlier } : {};
  if (isRecord(later)) {
    for (const [key, value] of Object.entries(later)) {
      if (tokens(value) > 0 || (typeof value === 'string' && value !== '')) out[key] = value;
      else if (depth > 0 && isRecord(value)) out[key] = mergePositive(out[key], value, depth - 1);
    }
  }
  return out;
}

/**
 * Later Anthropic stream events repeat or update fields; a positive later value wins. `message_start` carries the
 * service tier and the input side, `message_delta` the cumulative counts, the server tools' among them.
 */
export const mergeAnthropicUsage = (earlier: unknown, later: unknown): Record<string, unknown> =>
  mergePositive(earlier, later, 1);

/** Whether the upstream reported anything billable (the reference falls back to counting otherwise). */
export const hasUsage = (usage: NormalisedUsage | undefined): usage is NormalisedUsage =>
  usage !== undefined && usage.promptTokens + usage.completionTokens > 0;

/** OpenAI's three usage counts, for an upstream that reports no more than them. */
export const toOpenAiUsageCounts = (usage: NormalisedUsage): Record<string, number> => ({
  prompt_tokens: usage.promptTokens,
  completion_tokens: usage.completionTokens,
  total_tokens: usage.promptTokens + usage.completionTokens,
});

/** The OpenAI `usage` object for a client (a synthesised final stream chunk, or a counted non-stream answer). */
export function toOpenAiUsage(usage: NormalisedUsage): Record<string, unknown> {
  return {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.promptTokens + usage.completionTokens,
    prompt_tokens_details: { cached_tokens: usage.cachedTokens, audio_tokens: usage.audioInputTokens },
    completion_tokens_details: {
      reasoning_tokens: usage.reasoningTokens,
      audio_tokens: usage.audioOutputTokens,
    },
  };
}
