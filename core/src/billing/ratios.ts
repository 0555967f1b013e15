/**
 * Price lookup for one request: which ratios (or which per-call price) apply to a model in a group.
 *
 * Pure: the caller passes the option values (`ModelRatio`, `CompletionRatio`, `CacheRatio`, `ModelPrice`,
 * `GroupRatio`, `SelfUseModeEnabled`) and the user's `accept_unset_model_ratio_model` setting, so the relay can
 * serve them from its in-memory option cache and tests can pass tables by hand. See docs/adr/0006.
 */

import {
  entryForModel,
  type LongContextTier,
  type LongContextTiers,
  type RequestFeeKind,
  type RequestFees,
  type ServiceTierRatio,
} from './price-shapes.ts';

/** group -> model -> value: a price map per group (`GroupModelRatio` and its siblings). */
export type GroupMap = Readonly<Record<string, Readonly<Record<string, number>>>>;

/**
 * A group's own prices (`GroupModelRatio`, `GroupCompletionRatio`, `GroupCacheRatio`, `GroupCreateCacheRatio`,
 * `GroupCreateCache1hRatio`, `GroupModelPrice`): each entry wins over the un-grouped map's entry for users and tokens of that group, one
 * field at a time, so a group that only changes the input price keeps the model's output ratio.
 */
export interface GroupPriceTables {
  readonly modelRatio?: GroupMap;
  readonly completionRatio?: GroupMap;
  readonly cacheRatio?: GroupMap;
  readonly cacheCreationRatio?: GroupMap;
  readonly cacheCreation1hRatio?: GroupMap;
  /** USD per call for a group; wins over every ratio of that group and over the un-grouped `ModelPrice`. */
  readonly modelPrice?: GroupMap;
}

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
  /** 1-hour cache-write price / input price by model; absent models use {@link DEFAULT_CACHE_CREATION_1H_RATIO}. */
  readonly cacheCreation1hRatio?: Readonly<Record<string, number>>;
  /** Prices for one group only; absent means every group pays the maps above. */
  readonly groupPrices?: GroupPriceTables;
  /** `LongContextTiers`: the whole call at multiplied prices past a prompt size (docs/adr/0042). */
  readonly longContextTiers?: LongContextTiers;
  /** `ServiceTierRatio`: the token bill multiplied by the service tier the answer reports. */
  readonly serviceTierRatio?: ServiceTierRatio;
  /** `RequestFees`: USD per web search and per image, added to the bill. */
  readonly requestFees?: RequestFees;
}

/**
 * A model's price shapes beyond its flat per-token price (docs/adr/0042), each absent when the model has none: the
 * long-context tiers (per-token models only), the multipliers by service tier (per-token only) and the fees in USD
 * per unit (both kinds: the per-call price is the operator's all-in price for the tokens, not for the searches).
 */
export interface PriceShapes {
  readonly longContextTiers?: readonly LongContextTier[];
  readonly serviceTiers?: Readonly<Record<string, number>>;
  readonly fees?: Readonly<Partial<Record<RequestFeeKind, number>>>;
}

/** The ratio an unpriced model is billed at in self-use mode or when the user accepted unpriced models ($75 / 1M). */
export const UNSET_MODEL_RATIO = 37.5;

/** Anthropic bills a 5-minute cache write at 1.25 × input; the reference uses that for every model. */
export const DEFAULT_CACHE_CREATION_RATIO = 1.25;

/**
 * Anthropic bills a 1-hour cache write at 2 × input (https://docs.anthropic.com/en/docs/about-claude/pricing,
 * "1h cache writes"); only Anthropic reports writes by duration, so every other model's writes stay 5-minute ones.
 */
export const DEFAULT_CACHE_CREATION_1H_RATIO = 2;

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

/** A map's own entry: a model or group named like `constructor` must not find Object's prototype. */
const ownEntry = <T>(map: Readonly<Record<string, T>> | undefined, key: string): T | undefined =>
  map && Object.hasOwn(map, key) ? map[key] : undefined;

/** The group's ratio; a group missing from the table costs 1 (as in the reference). */
export function lookupGroupRatio(tables: Pick<PriceTables, 'groupRatio'>, group: string): number {
  return ownEntry(tables.groupRatio, group) ?? 1;
}

/** A group's own entry for a model in one of its group maps, or undefined. */
export function lookupGroupEntry(
  map: GroupMap | undefined,
  group: string,
  model: string,
): number | undefined {
  return ownEntry(ownEntry(map, group), priceModelName(model));
}

/** The per-call price in USD, or undefined when the model is priced per token. */
export function lookupModelPrice(tables: Pick<PriceTables, 'modelPrice'>, model: string): number | undefined {
  return ownEntry(tables.modelPrice, priceModelName(model));
}

/** The configured model ratio, or undefined when the model has none. */
export function lookupModelRatio(tables: Pick<PriceTables, 'modelRatio'>, model: string): number | undefined {
  return ownEntry(tables.modelRatio, priceModelName(model));
}

/** Cached-input price / input price; 1 (no discount) when not configured. */
export function lookupCacheRatio(tables: Pick<PriceTables, 'cacheRatio'>, model: string): number {
  return ownEntry(tables.cacheRatio, priceModelName(model)) ?? 1;
}

/** Cache-write price / input price; {@link DEFAULT_CACHE_CREATION_RATIO} when not configured. */
export function lookupCacheCreationRatio(
  tables: Pick<PriceTables, 'cacheCreationRatio'>,
  model: string,
): number {
  return ownEntry(tables.cacheCreationRatio, priceModelName(model)) ?? DEFAULT_CACHE_CREATION_RATIO;
}

/** 1-hour cache-write price / input price; {@link DEFAULT_CACHE_CREATION_1H_RATIO} when not configured. */
export function lookupCacheCreation1hRatio(
  tables: Pick<PriceTables, 'cacheCreation1hRatio'>,
  model: string,
): number {
  return ownEntry(tables.cacheCreation1hRatio, priceModelName(model)) ?? DEFAULT_CACHE_CREATION_1H_RATIO;
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
  return ownEntry(tables.completionRatio, name) ?? builtInCompletionRatio(name) ?? 1;
}

/**
 * Audio-input price / text-input price for audio and realtime models (reference `GetAudioRatio`, with OpenAI's
 * current prices): the undated `gpt-4o-realtime-preview` and `gpt-4o-audio-preview` and their 2024-12-17 and later
 * snapshots bill audio at $40 in / $80 out per million (https://platform.openai.com/docs/pricing, "Audio tokens";
 * https://platform.openai.com/docs/models/gpt-4o-realtime-preview, /gpt-4o-audio-preview): 8 × the realtime text
 * price of $5 and 16 × the audio model's $2.50. Only the first snapshots, `-2024-10-01`, kept the launch price of
 * $100 / $200 (20 × and 40 ×); the reference bills the undated names at that launch price still. The mini models:
 * audio $10 / $20 over text $0.60 (realtime) and $0.15 (audio).
 */
export function lookupAudioRatio(model: string): number {
  const name = model.toLowerCase();
  const isLaunchSnapshot = name.endsWith('-2024-10-01');
  if (name.includes('-realtime')) {
    if (name.includes('mini')) return 10 / 0.6;
    return isLaunchSnapshot ? 20 : 8;
  }
  if (name.includes('-audio')) {
    if (name.includes('mini')) return 10 / 0.15;
    return isLaunchSnapshot ? 40 : 16;
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
      /** Only `fees` applies to a per-call price. */
      readonly shapes?: PriceShapes;
    }
  | {
      readonly kind: 'per-token';
      readonly model: string;
      readonly modelRatio: number;
      readonly completionRatio: number;
      readonly cacheRatio: number;
      /** 5-minute cache writes (and writes of providers that do not say how long they keep them). */
      readonly cacheCreationRatio: number;
      /** Anthropic's 1-hour cache writes. */
      readonly cacheCreation1hRatio: number;
      readonly groupRatio: number;
      /** True when the model has no configured ratio and {@link UNSET_MODEL_RATIO} was used. */
      readonly isUnsetRatio: boolean;
      readonly shapes?: PriceShapes;
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
 *
 * The group's own prices come first ({@link GroupPriceTables}): a group per-call price, else a group model
 * ratio, decides the price for that group even where the un-grouped maps say otherwise, and it is the price the
 * group pays, so `GroupRatio` is not applied on top (`groupRatio` 1): an operator who writes "vip pays USD 2 per
 * million" means USD 2, not USD 2 × the vip discount. The relative ratios (completion, cache read, cache write)
 * are looked up in the group's map first and then in the un-grouped one, whichever decided the input price;
 * `GroupRatio` still multiplies a model the group has no own input price for.
 *
 * The model's price shapes (long-context tiers, service tiers, fees; docs/adr/0042) are attached whichever price
 * decided: they multiply or add to that price, a group's own included.
 */
export function resolvePricing(input: ResolvePricingInput): Pricing | PricingRefusal {
  const pricing = resolveFlatPricing(input);
  if ('code' in pricing) return pricing;
  const shapes = shapesOf(input.tables, pricing);
  return shapes === undefined ? pricing : { ...pricing, shapes };
}

/**
 * The model's price shapes (`LongContextTiers`, `ServiceTierRatio`, `RequestFees`: its exact entry, else the
 * longest `prefix*` entry), or undefined when it has none. A per-call price takes the fees only: it is the
 * operator's all-in price for the call's tokens, whatever their number or tier.
 */
function shapesOf(tables: PriceTables, pricing: Pricing): PriceShapes | undefined {
  const name = priceModelName(pricing.model);
  const fees = entryForModel(tables.requestFees, name);
  const longContextTiers =
    pricing.kind === 'per-token' ? entryForModel(tables.longContextTiers, name) : undefined;
  const serviceTiers =
    pricing.kind === 'per-token' ? entryForModel(tables.serviceTierRatio, name) : undefined;
  if (fees === undefined && longContextTiers === undefined && serviceTiers === undefined) return undefined;
  return {
    ...(longContextTiers === undefined ? {} : { longContextTiers }),
    ...(serviceTiers === undefined ? {} : { serviceTiers }),
    ...(fees === undefined ? {} : { fees }),
  };
}

function resolveFlatPricing(input: ResolvePricingInput): Pricing | PricingRefusal {
  const { tables, model, group } = input;
  const own = tables.groupPrices;
  const groupModelPrice = lookupGroupEntry(own?.modelPrice, group, model);
  if (groupModelPrice !== undefined)
    return { kind: 'per-call', model, modelPrice: groupModelPrice, groupRatio: 1 };
  const groupModelRatio = lookupGroupEntry(own?.modelRatio, group, model);
  const relative = {
    completionRatio:
      lookupGroupEntry(own?.completionRatio, group, model) ?? lookupCompletionRatio(tables, model),
    cacheRatio: lookupGroupEntry(own?.cacheRatio, group, model) ?? lookupCacheRatio(tables, model),
    cacheCreationRatio:
      lookupGroupEntry(own?.cacheCreationRatio, group, model) ?? lookupCacheCreationRatio(tables, model),
    cacheCreation1hRatio:
      lookupGroupEntry(own?.cacheCreation1hRatio, group, model) ?? lookupCacheCreation1hRatio(tables, model),
  };
  if (groupModelRatio !== undefined)
    return {
      kind: 'per-token',
      model,
      modelRatio: groupModelRatio,
      ...relative,
      groupRatio: 1,
      isUnsetRatio: false,
    };

  const groupRatio = lookupGroupRatio(tables, group);
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
    ...relative,
    groupRatio,
    isUnsetRatio: configured === undefined,
  };
}

export const isPricingRefusal = (value: Pricing | PricingRefusal): value is PricingRefusal => 'code' in value;
