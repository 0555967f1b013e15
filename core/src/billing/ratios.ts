/**
 * Price lookup for one request: which ratios (or which per-call price) apply to a model in a group.
 *
 * Pure: the caller passes the option values (`ModelRatio`, `CompletionRatio`, `CacheRatio`, `ModelPrice`,
 * `GroupRatio`, `SelfUseModeEnabled`) and the user's `accept_unset_model_ratio_model` setting, so the relay can
 * serve them from its in-memory option cache and tests can pass tables by hand. See docs/adr/0006.
 */

/** The price option maps, as stored in the option registry. */
export interface PriceTables {
  readonly modelRatio: Readonly<Record<string, number>>;
  readonly completionRatio: Readonly<Record<string, number>>;
  readonly cacheRatio: Readonly<Record<string, number>>;
  /** USD per call; a model listed here is billed per call, not per token. */
  readonly modelPrice: Readonly<Record<string, number>>;
  readonly groupRatio: Readonly<Record<string, number>>;
  /** Cache-write (creation) price / input price by model; absent models use {@link DEFAULT_CACHE_CREATION_RATIO}. */
  readonly cacheCreationRatio?: Readonly<Record<string, number>>;
}

/** The ratio an unpriced model is billed at in self-use mode or when the user accepted unpriced models ($75 / 1M). */
export const UNSET_MODEL_RATIO = 37.5;

/** Anthropic bills a 5-minute cache write at 1.25 × input; the reference uses that for every model. */
export const DEFAULT_CACHE_CREATION_RATIO = 1.25;

/** Output price of audio / input price of audio (reference `GetAudioCompletionRatio`). */
export const AUDIO_COMPLETION_RATIO = 2;

/**
 * The name prices are looked up under. Custom GPTs arrive as `gpt-4-gizmo-g-abc…` and share one price entry
 * `gpt-4-gizmo-*` (same for `gpt-4o-gizmo-*`); every other name is used as it is.
 */
export function priceModelName(model: string): string {
  if (model.startsWith('gpt-4o-gizmo')) return 'gpt-4o-gizmo-*';
  if (model.startsWith('gpt-4-gizmo')) return 'gpt-4-gizmo-*';
  return model;
}

/** The group's ratio; a group missing from the table costs 1 (as in the reference). */
export function lookupGroupRatio(tables: Pick<PriceTables, 'groupRatio'>, group: string): number {
  return tables.groupRatio[group] ?? 1;
}

/** The per-call price in USD, or undefined when the model is priced per token. */
export function lookupModelPrice(tables: Pick<PriceTables, 'modelPrice'>, model: string): number | undefined {
  return tables.modelPrice[priceModelName(model)];
}

/** The configured model ratio, or undefined when the model has none. */
export function lookupModelRatio(tables: Pick<PriceTables, 'modelRatio'>, model: string): number | undefined {
  return tables.modelRatio[priceModelName(model)];
}

/** Cached-input price / input price; 1 (no discount) when not configured. */
export function lookupCacheRatio(tables: Pick<PriceTables, 'cacheRatio'>, model: string): number {
  return tables.cacheRatio[priceModelName(model)] ?? 1;
}

/** Cache-write price / input price; {@link DEFAULT_CACHE_CREATION_RATIO} when not configured. */
export function lookupCacheCreationRatio(
  tables: Pick<PriceTables, 'cacheCreationRatio'>,
  model: string,
): number {
  return tables.cacheCreationRatio?.[priceModelName(model)] ?? DEFAULT_CACHE_CREATION_RATIO;
}

/**
 * The reference's built-in completion ratio rules (output / input price by model family), or undefined when no
 * rule matches. Used only for models missing from the `CompletionRatio` option: unlike the reference, where
 * these rules win over the configured map (so e.g. a Claude completion ratio cannot be changed), an operator's
 * value always wins here. The built-in `CompletionRatio` default already lists every built-in model.
 */
export function builtInCompletionRatio(model: string): number | undefined {
  const name = model.toLowerCase();
  if (name.includes('gizmo') || name === 'gpt-4-all') return undefined;
  if (name.startsWith('gpt-4o') || name.startsWith('chatgpt-4o')) {
    if (name === 'gpt-4o-2024-05-13' || name === 'chatgpt-4o-latest') return 3;
    return 4;
  }
  if (name.startsWith('gpt-4.5-preview')) return 2;
  if (name.startsWith('gpt-4-turbo') || name.endsWith('-1106-preview') || name.endsWith('-0125-preview')) {
    return 3;
  }
  if (name.startsWith('gpt-4')) return 2;
  if (/^o\d/.test(name)) return 4;
  if (name.startsWith('gpt-3.5')) {
    if (name === 'gpt-3.5-turbo' || name.endsWith('0125')) return 3;
    if (name.endsWith('1106')) return 2;
    return 4 / 3;
  }
  if (name.startsWith('claude-instant-1') || name.startsWith('claude-2')) return 3;
  if (name.startsWith('claude-3')) return 5;
  if (name.startsWith('mistral-')) return 3;
  if (name.startsWith('gemini-2.5-pro-preview')) return 8;
  if (name.startsWith('gemini-')) return 4;
  if (name === 'command-r') return 3;
  if (name === 'command-r-plus') return 5;
  if (name.startsWith('command-r') && name.endsWith('-08-2024')) return 4;
  if (name === 'deepseek-chat' || name === 'deepseek-reasoner') return 4;
  if (/^ernie-(speed|lite|character|functions)/.test(name)) return 2;
  if (name.startsWith('llama2-70b')) return 1.25;
  if (name.startsWith('llama3-8b')) return 2;
  if (name.startsWith('llama3-70b')) return 0.79 / 0.59;
  return undefined;
}

/**
 * Output price / input price: the configured `CompletionRatio` entry, else the built-in rule for the model
 * family ({@link builtInCompletionRatio}), else 1.
 */
export function lookupCompletionRatio(tables: Pick<PriceTables, 'completionRatio'>, model: string): number {
  const name = priceModelName(model);
  return tables.completionRatio[name] ?? builtInCompletionRatio(name) ?? 1;
}

/** Audio-input price / text-input price for audio and realtime models (reference `GetAudioRatio`). */
export function lookupAudioRatio(model: string): number {
  const name = model.toLowerCase();
  if (name.includes('-realtime')) {
    if (name.startsWith('gpt-4o-realtime-preview-2024-12-17')) return 8;
    if (name.includes('mini')) return 10 / 0.6;
    return 20;
  }
  if (name.includes('-audio')) {
    if (name.endsWith('-2024-12-17') && !name.includes('mini')) return 16;
    if (name.includes('mini')) return 10 / 0.15;
    return 40;
  }
  return 20;
}

/** Whether a model is settled with the audio formula (its usage splits text and audio tokens). */
export const isAudioModel = (model: string): boolean =>
  model.startsWith('gpt-4o-audio') || model.startsWith('gpt-4o-mini-audio') || model.includes('-realtime');

/** How one request is priced. Every number is already resolved; `groupRatio` applies to both kinds. */
export type Pricing =
  | {
      readonly kind: 'per-call';
      readonly model: string;
      /** USD per call. */
      readonly modelPrice: number;
      readonly groupRatio: number;
    }
  | {
      readonly kind: 'per-token';
      readonly model: string;
      readonly modelRatio: number;
      readonly completionRatio: number;
      readonly cacheRatio: number;
      readonly cacheCreationRatio: number;
      readonly groupRatio: number;
      /** True when the model has no configured ratio and {@link UNSET_MODEL_RATIO} was used. */
      readonly isUnsetRatio: boolean;
    };

/** Why a model cannot be priced: the relay answers 500 `model_price_error`, as the reference does. */
export interface PricingRefusal {
  readonly code: 'model_price_error';
  readonly message: string;
}

export interface ResolvePricingInput {
  readonly tables: PriceTables;
  /** The model the client asked for (billing uses the requested name, never the mapped upstream one). */
  readonly model: string;
  readonly group: string;
  readonly selfUseMode: boolean;
  /** The user's `accept_unset_model_ratio_model` setting. */
  readonly acceptUnsetModelRatio: boolean;
  /** The root user is told to configure a price instead of being told to ask an administrator. */
  readonly isRoot?: boolean;
}

/**
 * Resolves the pricing of a request (reference §5.1–5.2): a `ModelPrice` entry makes the call per-call and wins
 * over ratios; otherwise the model ratio, and a model with no ratio is billed at {@link UNSET_MODEL_RATIO} in
 * self-use mode or when the user accepted unpriced models, and refused otherwise.
 */
export function resolvePricing(input: ResolvePricingInput): Pricing | PricingRefusal {
  const { tables, model } = input;
  const groupRatio = lookupGroupRatio(tables, input.group);
  const modelPrice = lookupModelPrice(tables, model);
  if (modelPrice !== undefined) return { kind: 'per-call', model, modelPrice, groupRatio };

  const configured = lookupModelRatio(tables, model);
  if (configured === undefined && !input.selfUseMode && !input.acceptUnsetModelRatio) {
    return {
      code: 'model_price_error',
      message: input.isRoot
        ? `Model ${model} has no ratio or price; set one in the console or turn on self-use mode`
        : `Model ${model} has no ratio or price; ask an administrator to set one`,
    };
  }
  return {
    kind: 'per-token',
    model,
    modelRatio: configured ?? UNSET_MODEL_RATIO,
    completionRatio: lookupCompletionRatio(tables, model),
    cacheRatio: lookupCacheRatio(tables, model),
    cacheCreationRatio: lookupCacheCreationRatio(tables, model),
    groupRatio,
    isUnsetRatio: configured === undefined,
  };
}

export const isPricingRefusal = (value: Pricing | PricingRefusal): value is PricingRefusal => 'code' in value;
