/**
 * Built-in prices of well-known models, the defaults of the ModelRatio, CompletionRatio, CacheRatio and
 * ModelPrice options (and what `POST /api/option/rest_model_ratio` restores).
 *
 * Units: a model ratio of 1 is $2 per 1M input tokens (with the default QuotaPerUnit of 500000, one quota unit
 * per token); the completion ratio is output price / input price; the cache ratio is cached-input price / input
 * price; a model price is USD per call. Token prices below are written as the providers publish them (USD per
 * 1M tokens) and turned into ratios, so each line can be checked against a price page. Lines marked
 * `reference` keep the numbers of the reference system where it gives them, even where a provider has since
 * changed its price, so an installation moving over is billed the same. Operators edit these in the console;
 * they are a starting point, not a promise.
 */

interface TokenPricing {
  readonly ratio: number;
  readonly completion: number;
  /** Absent when the provider sells no cached input: the billing treats that as 1. */
  readonly cache?: number;
}

// Six significant digits: enough for any published price, and no 8.333333333333334 in the console.
const round = (value: number) => Number(value.toPrecision(6));

/** From USD per 1M tokens: input, output and, where sold, cached input. */
function usd(input: number, output: number, cachedInput?: number): TokenPricing {
  return {
    ratio: round(input / 2),
    completion: round(output / input),
    ...(cachedInput === undefined ? {} : { cache: round(cachedInput / input) }),
  };
}

/** Ratios given directly, where the reference system's numbers are kept. */
function ratios(ratio: number, completion: number, cache?: number): TokenPricing {
  return { ratio, completion, ...(cache === undefined ? {} : { cache }) };
}

/** A model the provider does not charge for. */
const free: TokenPricing = { ratio: 0, completion: 1 };

/** The same pricing under several names (dated snapshots, aliases, reasoning-effort suffixes). */
function alike(names: readonly string[], pricing: TokenPricing): Record<string, TokenPricing> {
  return Object.fromEntries(names.map((name) => [name, pricing]));
}

const openai: Record<string, TokenPricing> = {
  ...alike(['gpt-4o', 'gpt-4o-2024-08-06', 'gpt-4o-2024-11-20'], usd(2.5, 10, 1.25)),
  ...alike(['gpt-4o-2024-05-13', 'chatgpt-4o-latest'], usd(5, 15)),
  ...alike(['gpt-4o-mini', 'gpt-4o-mini-2024-07-18'], usd(0.15, 0.6, 0.075)),
  ...alike(['gpt-4o-search-preview', 'gpt-4o-audio-preview'], usd(2.5, 10)),
  ...alike(['gpt-4o-mini-search-preview', 'gpt-4o-mini-audio-preview'], usd(0.15, 0.6)),
  'gpt-4o-realtime-preview': usd(5, 20, 2.5),
  'gpt-4o-mini-realtime-preview': usd(0.6, 2.4, 0.3),
  ...alike(['gpt-4.1', 'gpt-4.1-2025-04-14'], usd(2, 8, 0.5)),
  ...alike(['gpt-4.1-mini', 'gpt-4.1-mini-2025-04-14'], usd(0.4, 1.6, 0.1)),
  ...alike(['gpt-4.1-nano', 'gpt-4.1-nano-2025-04-14'], usd(0.1, 0.4, 0.025)),
  'gpt-4.5-preview': usd(75, 150, 37.5),
  ...alike(['gpt-5', 'gpt-5-2025-08-07', 'gpt-5-chat-latest', 'gpt-5-codex'], usd(1.25, 10, 0.125)),
  ...alike(['gpt-5-mini', 'gpt-5-mini-2025-08-07'], usd(0.25, 2, 0.025)),
  ...alike(['gpt-5-nano', 'gpt-5-nano-2025-08-07'], usd(0.05, 0.4, 0.005)),
  ...alike(
    [
      'gpt-4-turbo',
      'gpt-4-turbo-2024-04-09',
      'gpt-4-turbo-preview',
      'gpt-4-0125-preview',
      'gpt-4-1106-preview',
    ],
    usd(10, 30),
  ),
  ...alike(['gpt-4', 'gpt-4-0613'], usd(30, 60)),
  'gpt-4-32k': usd(60, 120),
  ...alike(['gpt-3.5-turbo', 'gpt-3.5-turbo-0125'], usd(0.5, 1.5)),
  'gpt-3.5-turbo-1106': usd(1, 2),
  'gpt-3.5-turbo-16k': usd(3, 4),
  'gpt-3.5-turbo-instruct': usd(1.5, 2),
  ...alike(['o1', 'o1-2024-12-17', 'o1-preview'], usd(15, 60, 7.5)),
  'o1-mini': usd(1.1, 4.4, 0.55),
  'o1-pro': usd(150, 600),
  ...alike(['o3', 'o3-2025-04-16'], usd(2, 8, 0.5)),
  'o3-pro': usd(20, 80),
  ...alike(['o3-mini', 'o3-mini-high', 'o3-mini-medium', 'o3-mini-low'], usd(1.1, 4.4, 0.55)),
  ...alike(['o4-mini', 'o4-mini-2025-04-16'], usd(1.1, 4.4, 0.275)),
  'codex-mini-latest': usd(1.5, 6, 0.375),
  'text-embedding-3-small': usd(0.02, 0.02),
  'text-embedding-3-large': usd(0.13, 0.13),
  'text-embedding-ada-002': usd(0.1, 0.1),
  ...alike(['omni-moderation-latest', 'text-moderation-latest', 'text-moderation-stable'], free),
  // reference: speech is metered as tokens derived from audio length or characters, not at list price.
  'whisper-1': ratios(15, 1),
  'tts-1': ratios(7.5, 1),
  'tts-1-hd': ratios(15, 1),
};

const anthropic: Record<string, TokenPricing> = {
  'claude-instant-1.2': usd(0.8, 2.4),
  ...alike(['claude-2.0', 'claude-2.1'], usd(8, 24)),
  'claude-3-haiku-20240307': usd(0.25, 1.25, 0.025),
  'claude-3-sonnet-20240229': usd(3, 15, 0.3),
  ...alike(['claude-3-opus-20240229', 'claude-3-opus-latest'], usd(15, 75, 1.5)),
  // reference: 3.5 Haiku at its launch price.
  ...alike(['claude-3-5-haiku-20241022', 'claude-3-5-haiku-latest'], ratios(0.5, 5, 0.1)),
  ...alike(
    [
      'claude-3-5-sonnet-20240620',
      'claude-3-5-sonnet-20241022',
      'claude-3-5-sonnet-latest',
      'claude-3-7-sonnet-20250219',
      'claude-3-7-sonnet-20250219-thinking',
      'claude-3-7-sonnet-latest',
      'claude-sonnet-4-20250514',
      'claude-sonnet-4-20250514-thinking',
      'claude-sonnet-4-5-20250929',
      'claude-sonnet-4-5-20250929-thinking',
      'claude-sonnet-4-5',
    ],
    usd(3, 15, 0.3),
  ),
  ...alike(
    [
      'claude-opus-4-20250514',
      'claude-opus-4-20250514-thinking',
      'claude-opus-4-1-20250805',
      'claude-opus-4-1-20250805-thinking',
      'claude-opus-4-1',
    ],
    usd(15, 75, 1.5),
  ),
  ...alike(
    ['claude-opus-4-5-20251101', 'claude-opus-4-5-20251101-thinking', 'claude-opus-4-5'],
    usd(5, 25, 0.5),
  ),
  ...alike(['claude-haiku-4-5-20251001', 'claude-haiku-4-5'], usd(1, 5, 0.1)),
};

const google: Record<string, TokenPricing> = {
  // reference: 1.5 models at their long-context price.
  ...alike(['gemini-1.5-pro', 'gemini-1.5-pro-latest', 'gemini-1.5-pro-002'], ratios(1.25, 4)),
  ...alike(['gemini-1.5-flash', 'gemini-1.5-flash-latest', 'gemini-1.5-flash-002'], ratios(0.075, 4)),
  'gemini-1.5-flash-8b': usd(0.0375, 0.15),
  ...alike(['gemini-2.0-flash', 'gemini-2.0-flash-001'], usd(0.1, 0.4, 0.025)),
  ...alike(['gemini-2.0-flash-lite', 'gemini-2.0-flash-lite-001'], usd(0.075, 0.3)),
  ...alike(
    [
      'gemini-2.5-pro',
      'gemini-2.5-pro-preview-06-05',
      'gemini-2.5-pro-preview-05-06',
      'gemini-2.5-pro-preview-03-25',
    ],
    usd(1.25, 10, 0.125),
  ),
  'gemini-2.5-flash': usd(0.3, 2.5, 0.03),
  // https://ai.google.dev/gemini-api/docs/pricing, prompts up to 200k tokens (longer ones: default-price-shapes.ts).
  'gemini-3-pro-preview': usd(2, 12, 0.2),
  'gemini-2.5-flash-lite': usd(0.1, 0.4, 0.01),
  'gemini-embedding-001': usd(0.15, 0.15),
};

const others: Record<string, TokenPricing> = {
  // reference: DeepSeek's ratios as the reference rounds them.
  'deepseek-chat': ratios(0.135, 4, 0.25),
  'deepseek-reasoner': ratios(0.275, 4, 0.25),

  ...alike(['grok-2-1212', 'grok-2-vision-1212'], usd(2, 10)),
  ...alike(['grok-3', 'grok-3-beta', 'grok-3-latest', 'grok-4', 'grok-4-0709'], usd(3, 15, 0.75)),
  ...alike(['grok-3-fast', 'grok-3-fast-beta'], usd(5, 25, 1.25)),
  ...alike(['grok-3-mini', 'grok-3-mini-beta'], usd(0.3, 0.5, 0.075)),
  ...alike(['grok-3-mini-fast', 'grok-3-mini-fast-beta'], usd(0.6, 4, 0.15)),

  ...alike(['mistral-large-latest', 'pixtral-large-latest'], usd(2, 6)),
  'mistral-medium-latest': usd(0.4, 2),
  'mistral-small-latest': usd(0.1, 0.3),
  'codestral-latest': usd(0.3, 0.9),
  'open-mistral-nemo': usd(0.15, 0.15),
  'ministral-8b-latest': usd(0.1, 0.1),
  'ministral-3b-latest': usd(0.04, 0.04),
  'mistral-embed': usd(0.1, 0.1),

  // reference: the first Command R models at their launch prices.
  'command-r': ratios(0.25, 3),
  'command-r-plus': ratios(1.5, 5),
  'command-r-08-2024': usd(0.15, 0.6),
  ...alike(['command-r-plus-08-2024', 'command-a-03-2025'], usd(2.5, 10)),
  'command-r7b-12-2024': usd(0.0375, 0.15),
  ...alike(['embed-english-v3.0', 'embed-multilingual-v3.0'], usd(0.1, 0.1)),

  // Alibaba Cloud Model Studio (international) prices.
  'qwen-max': usd(1.6, 6.4),
  'qwen-plus': usd(0.4, 1.2),
  'qwen-turbo': usd(0.05, 0.2),

  ...alike(['glm-4-flash', 'glm-4.5-flash'], free),
  ...alike(['glm-4.5', 'glm-4.6'], usd(0.6, 2.2, 0.11)),
  'glm-4.5-air': usd(0.2, 1.1, 0.03),

  ...alike(['kimi-k2-0711-preview', 'kimi-k2-0905-preview'], usd(0.6, 2.5, 0.15)),
};

const TOKEN_PRICING: Readonly<Record<string, TokenPricing>> = {
  ...openai,
  ...anthropic,
  ...google,
  ...others,
};

function pick(select: (pricing: TokenPricing) => number | undefined): Readonly<Record<string, number>> {
  const entries = Object.entries(TOKEN_PRICING).flatMap(([model, pricing]) => {
    const value = select(pricing);
    return value === undefined ? [] : [[model, value] as const];
  });
  return Object.freeze(Object.fromEntries(entries));
}

/** Input price multiplier per model: 1 = $2 per 1M input tokens. */
export const DEFAULT_MODEL_RATIO = pick((pricing) => pricing.ratio);

/** Output price / input price per model; every model in DEFAULT_MODEL_RATIO has one. */
export const DEFAULT_COMPLETION_RATIO = pick((pricing) => pricing.completion);

/** Cached-input price / input price, for the models whose provider sells cached input. */
export const DEFAULT_CACHE_RATIO = pick((pricing) => pricing.cache);

const midjourney = (actions: readonly string[], price: number) =>
  Object.fromEntries(actions.map((action) => [`mj_${action}`, price]));

/**
 * USD per call, for models billed per request rather than per token. A model priced here is billed by this
 * price even if it also has a ratio, so no model appears in both maps.
 */
export const DEFAULT_MODEL_PRICE: Readonly<Record<string, number>> = Object.freeze({
  'dall-e-2': 0.02,
  'dall-e-3': 0.04,
  // Custom GPTs: every gizmo model is priced under this one name (reference).
  'gpt-4-gizmo-*': 0.1,
  'imagen-3.0-generate-002': 0.03,
  'grok-2-image-1212': 0.07,
  ...alikePrices(['rerank-v3.5', 'rerank-english-v3.0', 'rerank-multilingual-v3.0'], 0.002),
  // reference: Midjourney actions and Suno tasks.
  ...midjourney(
    [
      'imagine',
      'variation',
      'reroll',
      'blend',
      'modal',
      'zoom',
      'shorten',
      'high_variation',
      'low_variation',
      'pan',
      // Midjourney-Proxy Plus image edits.
      'edits',
    ],
    0.1,
  ),
  // Midjourney-Proxy Plus video (reference, later versions).
  mj_video: 0.8,
  ...midjourney(['describe', 'upscale', 'upload'], 0.05),
  ...midjourney(['inpaint', 'custom_zoom'], 0),
  swap_face: 0.05,
  suno_music: 0.1,
  suno_lyrics: 0.01,
  // Video: USD per second of output at the 720p tier (OpenAI's published prices; docs/adr/0033). A size above 720p
  // multiplies it (relay/src/tasks/video/price.ts).
  'sora-2': 0.1,
  'sora-2-pro': 0.3,
  // Veo on the Gemini API, per second whatever the resolution (Google's published prices).
  ...alikePrices(['veo-3.1-generate-preview', 'veo-3.0-generate-001'], 0.4),
  ...alikePrices(['veo-3.1-fast-generate-preview', 'veo-3.0-fast-generate-001'], 0.15),
  // Kling in std mode (what the relay asks for), per second, from Kling's API resource packages ($0.14 a unit;
  // a 5 s std clip is 1 unit on kling-v1-6, 1.5 on kling-v2-1, 10 on the master models). docs/adr/0033.
  'kling-v1-6': 0.028,
  'kling-v2-1': 0.042,
  ...alikePrices(['kling-v2-master', 'kling-v2-1-master'], 0.28),
  // Doubao Seedance at 720p, per second: Ark's token price (¥15 / ¥10 per million tokens for 1.0 pro / lite, 20,592
  // tokens a 720p second) at ¥7.2 a dollar; 1080p costs its token step more (relay/src/tasks/video/price.ts).
  'doubao-seedance-1-0-pro-250528': 0.043,
  ...alikePrices(['doubao-seedance-1-0-lite-t2v-250428', 'doubao-seedance-1-0-lite-i2v-250428'], 0.029),
});

function alikePrices(names: readonly string[], price: number): Record<string, number> {
  return Object.fromEntries(names.map((name) => [name, price]));
}
