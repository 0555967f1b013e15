/**
 * Built-in price shapes (docs/adr/0042), the defaults of the `LongContextTiers`, `ServiceTierRatio` and `RequestFees`
 * options, beside the flat prices of default-ratios.ts. Each entry is written from the provider's published price
 * page (the address beside it) as the multiple of the model's standard price it is, or as USD per unit for fees,
 * so it can be checked against the page. A key ending in `*` covers a model family (`entryForModel`: an exact key
 * wins, else the longest prefix). Operators edit them in the console like every price; they are a starting point.
 *
 * Shapes providers publish that these maps cannot hold are listed in the ADR (free allowances of Gemini's grounding,
 * OpenAI's web search content tokens, Anthropic's contracted Priority Tier).
 */
import type { LongContextTiers, RequestFees, ServiceTierRatio } from './price-shapes.ts';

/** Six significant digits, as default-ratios.ts writes ratios (1.81818, not 1.8181818181818181). */
const round = (value: number) => Number(value.toPrecision(6));

/** A service tier's price over the standard one, from two published USD prices. */
const over = (tierPrice: number, standardPrice: number) => round(tierPrice / standardPrice);

/** The same value under several keys. */
function alike<T>(keys: readonly string[], value: T): Record<string, T> {
  return Object.fromEntries(keys.map((key) => [key, value]));
}

/**
 * Long-context tiers. Every provider below bills the whole call at the higher price once the prompt (cache reads and
 * writes included) passes the threshold, not only the tokens above it.
 */
export const DEFAULT_LONG_CONTEXT_TIERS: LongContextTiers = Object.freeze({
  // https://docs.anthropic.com/en/docs/about-claude/pricing, "Long context pricing": Claude Sonnet 4 and 4.5 with
  // the 1M context window, prompts over 200K input tokens: input $6 (2 × $3), output $22.50 (1.5 × $15); the prompt
  // caching multipliers apply on top of the long-context input price (writes $7.50 / $12, reads $0.60: 2 ×).
  ...alike(['claude-sonnet-4-5*', 'claude-sonnet-4-20250514*'], [{ above: 200_000, input: 2, output: 1.5 }]),
  // https://ai.google.dev/gemini-api/docs/pricing, Gemini 2.5 Pro, prompts over 200k tokens: input $2.50 (2 × $1.25),
  // output $15 (1.5 × $10), context caching $0.25 (2 × $0.125).
  'gemini-2.5-pro*': [{ above: 200_000, input: 2, output: 1.5 }],
  // Same page, Gemini 3 Pro Preview, prompts over 200k tokens: input $4 (2 × $2), output $18 (1.5 × $12), context
  // caching $0.40 (2 × $0.20).
  'gemini-3-pro-preview*': [{ above: 200_000, input: 2, output: 1.5 }],
  // https://docs.x.ai/docs/models, grok-4-0709: requests over 128K tokens of context cost $6 / $30 (2 × $3 / $15).
  ...alike(['grok-4', 'grok-4-0709'], [{ above: 128_000, input: 2, output: 2 }]),
});

/**
 * Service tiers as OpenAI reports them in `service_tier`. Priority: https://openai.com/api-priority-processing/
 * (USD per 1M input / cached input / output tokens, the same multiple of the standard price for all three); flex:
 * https://platform.openai.com/docs/guides/flex-processing and the "Flex" prices of
 * https://platform.openai.com/docs/pricing (half the standard price on every token).
 */
export const DEFAULT_SERVICE_TIER_RATIO: ServiceTierRatio = Object.freeze({
  // GPT-5 (and GPT-5 codex) priority $2.50 / $0.25 / $20 over $1.25 / $0.125 / $10; flex $0.625 / $5.
  'gpt-5*': { priority: over(2.5, 1.25), flex: 0.5 },
  // GPT-5 mini priority $0.45 / $0.045 / $3.60 over $0.25 / $0.025 / $2; flex $0.125 / $1.
  'gpt-5-mini*': { priority: over(0.45, 0.25), flex: 0.5 },
  // GPT-5 nano: flex only ($0.025 / $0.20 over $0.05 / $0.40).
  'gpt-5-nano*': { flex: 0.5 },
  // GPT-4.1 priority $3.50 / $0.875 / $14 over $2 / $0.50 / $8; GPT-4.1 mini $0.70 / $0.175 / $2.80 over
  // $0.40 / $0.10 / $1.60; GPT-4.1 nano $0.20 / $0.05 / $0.80 over $0.10 / $0.025 / $0.40.
  'gpt-4.1*': { priority: over(3.5, 2) },
  'gpt-4.1-mini*': { priority: over(0.7, 0.4) },
  'gpt-4.1-nano*': { priority: over(0.2, 0.1) },
  // GPT-4o priority $4.25 / $2.125 / $17 over $2.50 / $1.25 / $10; GPT-4o mini $0.25 / $0.125 / $1 over
  // $0.15 / $0.075 / $0.60.
  ...alike(['gpt-4o', 'gpt-4o-2024-08-06', 'gpt-4o-2024-11-20'], { priority: over(4.25, 2.5) }),
  ...alike(['gpt-4o-mini', 'gpt-4o-mini-2024-07-18'], { priority: over(0.25, 0.15) }),
  // o3 priority $3.50 / $0.875 / $14 over $2 / $0.50 / $8, flex $1 / $4; o4-mini priority $2 / $0.50 / $8 over
  // $1.10 / $0.275 / $4.40, flex $0.55 / $2.20.
  ...alike(['o3', 'o3-2025-04-16'], { priority: over(3.5, 2), flex: 0.5 }),
  'o4-mini*': { priority: over(2, 1.1), flex: 0.5 },
});

/** USD per web search and per image. Free daily or monthly allowances are not modelled: every search is billed. */
export const DEFAULT_REQUEST_FEES: RequestFees = Object.freeze({
  // https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/web-search-tool, "Usage and pricing": $10 per 1,000
  // searches (`usage.server_tool_use.web_search_requests`), plus the tokens of the results.
  'claude-*': { web_search: 0.01 },
  // https://platform.openai.com/docs/pricing, "Built-in tools": web search $10 / 1k calls (the `web_search` tool on
  // every model; `web_search_preview` on reasoning models), the search content tokens billed as input tokens.
  ...alike(['gpt-5*', 'gpt-4.1*', 'gpt-4o*', 'o3', 'o3-2025-04-16', 'o4-mini*'], { web_search: 0.01 }),
  // Same page: web search preview on non-reasoning models, and the Chat Completions search models, $25 / 1k calls.
  ...alike(['gpt-4o-search-preview*', 'gpt-4o-mini-search-preview*'], { web_search: 0.025 }),
  // https://ai.google.dev/gemini-api/docs/pricing, "Grounding with Google Search": Gemini 2.5 and 2.0 $35 / 1,000
  // grounded prompts (one per prompt, however many searches it ran); Gemini 3 $14 / 1,000 search queries.
  ...alike(['gemini-2.5-*', 'gemini-2.0-flash*'], { web_search: 0.035 }),
  'gemini-3*': { web_search: 0.014 },
});
