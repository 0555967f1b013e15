import { DEFAULT_COMPLETION_RATIO } from './default-ratios.ts';

/** How a model is billed: by tokens times its ratios, or a fixed price per call. */
export const QuotaType = { Ratio: 0, Price: 1 } as const;
export type QuotaType = (typeof QuotaType)[keyof typeof QuotaType];

/** One row of the pricing page. Fields that do not apply to the model's quota type are 0. */
export interface PricingEntry {
  model_name: string;
  quota_type: QuotaType;
  model_ratio: number;
  /** USD per call. */
  model_price: number;
  completion_ratio: number;
  /** Groups whose enabled channels serve the model, limited to the groups the caller may use. */
  enable_groups: string[];
}

export interface PricingInput {
  /** The ModelRatio option (its default is the built-in table). */
  readonly modelRatio: Readonly<Record<string, number>>;
  /** The CompletionRatio option. */
  readonly completionRatio: Readonly<Record<string, number>>;
  /** The ModelPrice option. */
  readonly modelPrice: Readonly<Record<string, number>>;
  /** Model → groups with an enabled ability for it. */
  readonly servingGroups: ReadonlyMap<string, readonly string[]>;
  /** The groups the caller may see; other groups are left out of `enable_groups`. */
  readonly visibleGroups: ReadonlySet<string>;
}

/**
 * The output/input price multiplier of a token-priced model: the configured one, else the built-in one (an
 * operator who trims the CompletionRatio table should not make output as cheap as input by accident), else 1.
 */
export function completionRatioOf(model: string, configured: Readonly<Record<string, number>>): number {
  return configured[model] ?? DEFAULT_COMPLETION_RATIO[model] ?? 1;
}

/** gpt models first (the most asked for), then by name; per-token models before per-call ones. */
function comparePricing(a: PricingEntry, b: PricingEntry): number {
  if (a.quota_type !== b.quota_type) return a.quota_type - b.quota_type;
  const aGpt = a.model_name.startsWith('gpt') ? 0 : 1;
  const bGpt = b.model_name.startsWith('gpt') ? 0 : 1;
  if (aGpt !== bGpt) return aGpt - bGpt;
  return a.model_name < b.model_name ? -1 : a.model_name > b.model_name ? 1 : 0;
}

/**
 * Every model an enabled channel serves (in any group) and that has a price or a ratio, each once, as the
 * reference lists them. A per-call price wins over a ratio, as in billing. Models served but priced nowhere are
 * not listed: the relay refuses them outside self-use mode.
 */
export function buildPricing(input: PricingInput): PricingEntry[] {
  const names = [...input.servingGroups.keys()].filter(
    (model) => input.modelPrice[model] !== undefined || input.modelRatio[model] !== undefined,
  );
  const entries: PricingEntry[] = [];
  for (const model of names) {
    const enableGroups = (input.servingGroups.get(model) ?? []).filter((group) =>
      input.visibleGroups.has(group),
    );
    const price = input.modelPrice[model];
    if (price !== undefined) {
      entries.push({
        model_name: model,
        quota_type: QuotaType.Price,
        model_ratio: 0,
        model_price: price,
        completion_ratio: 0,
        enable_groups: enableGroups,
      });
      continue;
    }
    entries.push({
      model_name: model,
      quota_type: QuotaType.Ratio,
      model_ratio: input.modelRatio[model] ?? 0,
      model_price: 0,
      completion_ratio: completionRatioOf(model, input.completionRatio),
      enable_groups: enableGroups,
    });
  }
  return entries.sort(comparePricing);
}
