/**
 * The built-in price shapes against the figures of the providers' price pages, written here as the pages publish
 * them (USD per million tokens, or per search): a default that drifts from its page fails here.
 */
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_LONG_CONTEXT_TIERS,
  DEFAULT_REQUEST_FEES,
  DEFAULT_SERVICE_TIER_RATIO,
} from './default-price-shapes.ts';
import { DEFAULT_MODEL_RATIO } from './default-ratios.ts';
import {
  entryForModel,
  longContextTiersSchema,
  requestFeesSchema,
  serviceTierRatioSchema,
} from './price-shapes.ts';

/** USD per 1M input tokens of a built-in model (ratio 1 = $2). */
const inputUsd = (model: string) => (DEFAULT_MODEL_RATIO[model] ?? Number.NaN) * 2;

describe('built-in price shapes', () => {
  it('are valid option values', () => {
    expect(longContextTiersSchema.safeParse(DEFAULT_LONG_CONTEXT_TIERS).success).toBe(true);
    expect(serviceTierRatioSchema.safeParse(DEFAULT_SERVICE_TIER_RATIO).success).toBe(true);
    expect(requestFeesSchema.safeParse(DEFAULT_REQUEST_FEES).success).toBe(true);
  });

  it.each([
    // https://docs.anthropic.com/en/docs/about-claude/pricing: > 200K input tokens, $6 input.
    ['claude-sonnet-4-5', 200_000, 6],
    ['claude-sonnet-4-5-20250929-thinking', 200_000, 6],
    ['claude-sonnet-4-20250514', 200_000, 6],
    // https://ai.google.dev/gemini-api/docs/pricing: > 200k tokens, $2.50 (2.5 Pro) and $4 (3 Pro Preview).
    ['gemini-2.5-pro', 200_000, 2.5],
    ['gemini-2.5-pro-preview-06-05', 200_000, 2.5],
    ['gemini-3-pro-preview', 200_000, 4],
    // https://docs.x.ai/docs/models: grok-4-0709 above 128K, $6 input.
    ['grok-4-0709', 128_000, 6],
  ])('prices %s past %d prompt tokens at $%d per million input', (model, above, usd) => {
    const [tier] = entryForModel(DEFAULT_LONG_CONTEXT_TIERS, model) ?? [];
    expect(tier?.above).toBe(above);
    expect(inputUsd(model) * (tier?.input ?? Number.NaN)).toBeCloseTo(usd, 9);
  });

  it('gives Claude Sonnet 4.5 the published long-context output price, $22.50', () => {
    const [tier] = entryForModel(DEFAULT_LONG_CONTEXT_TIERS, 'claude-sonnet-4-5') ?? [];
    expect(15 * (tier?.output ?? Number.NaN)).toBe(22.5);
  });

  it('leaves models without a published tier alone', () => {
    for (const model of ['claude-opus-4-5', 'claude-haiku-4-5', 'gemini-2.5-flash', 'gpt-5', 'grok-3'])
      expect(entryForModel(DEFAULT_LONG_CONTEXT_TIERS, model), model).toBeUndefined();
  });

  it.each([
    // https://openai.com/api-priority-processing/ (USD per 1M input tokens at priority).
    ['gpt-5', 'priority', 2.5],
    ['gpt-5-codex', 'priority', 2.5],
    ['gpt-5-mini', 'priority', 0.45],
    ['gpt-4.1', 'priority', 3.5],
    ['gpt-4.1-mini', 'priority', 0.7],
    ['gpt-4.1-nano', 'priority', 0.2],
    ['gpt-4o', 'priority', 4.25],
    ['gpt-4o-mini', 'priority', 0.25],
    ['o3', 'priority', 3.5],
    ['o4-mini', 'priority', 2],
    // https://platform.openai.com/docs/pricing, Flex (USD per 1M input tokens).
    ['gpt-5', 'flex', 0.625],
    ['gpt-5-mini', 'flex', 0.125],
    ['gpt-5-nano', 'flex', 0.025],
    ['o3', 'flex', 1],
    ['o4-mini', 'flex', 0.55],
  ])('bills %s at %s at $%d per million input', (model, tier, usd) => {
    const ratio = entryForModel(DEFAULT_SERVICE_TIER_RATIO, model)?.[tier];
    expect(inputUsd(model) * (ratio ?? Number.NaN)).toBeCloseTo(usd, 4);
  });

  it('has no multiplier where OpenAI publishes none (GPT-5 nano at priority, o3-mini)', () => {
    expect(entryForModel(DEFAULT_SERVICE_TIER_RATIO, 'gpt-5-nano')?.priority).toBeUndefined();
    expect(entryForModel(DEFAULT_SERVICE_TIER_RATIO, 'o3-mini')).toBeUndefined();
  });

  it.each([
    // https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/web-search-tool: $10 per 1,000 searches.
    ['claude-sonnet-4-5', 0.01],
    ['claude-opus-4-1', 0.01],
    // https://platform.openai.com/docs/pricing, built-in tools: $10 / 1k calls; search models $25 / 1k.
    ['gpt-5', 0.01],
    ['gpt-4.1-mini', 0.01],
    ['o4-mini', 0.01],
    ['gpt-4o-search-preview', 0.025],
    ['gpt-4o-mini-search-preview', 0.025],
    // https://ai.google.dev/gemini-api/docs/pricing: $35 / 1,000 grounded prompts; Gemini 3 $14 / 1,000 queries.
    ['gemini-2.5-pro', 0.035],
    ['gemini-2.5-flash', 0.035],
    ['gemini-2.0-flash', 0.035],
    ['gemini-3-pro-preview', 0.014],
  ])('charges a web search on %s $%d', (model, usd) => {
    expect(entryForModel(DEFAULT_REQUEST_FEES, model)?.web_search).toBe(usd);
  });
});
