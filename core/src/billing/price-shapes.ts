/**
 * The price shapes providers publish beyond a flat per-token price (issue 39, docs/adr/0042): long-context tiers,
 * service tiers and per-request fees. These are the stored shapes of the options `LongContextTiers`,
 * `ServiceTierRatio` and `RequestFees`; the relay, the console's pricing editor and page, `/api/pricing` and the
 * ModelPrice CRD all read them from here.
 *
 * Every map is keyed by model name; a key ending in `*` is a prefix (`claude-*`) and applies to every model that
 * starts with it and has no exact entry (the longest prefix wins).
 */
import { z } from 'zod';

const positive = z.number({ error: 'must be a number' }).positive('must be more than 0');
const nonNegative = z.number({ error: 'must be a number' }).nonnegative('must not be negative');
const modelKey = z.string().trim().min(1, 'a model name must not be empty');

/**
 * One long-context tier: when a call's prompt (cache reads and writes included) is more than `above` tokens, the
 * whole call is billed with the model's prices multiplied: input by `input`, cache reads and writes by `cache`
 * (absent: `input`), output by `output`. Anthropic's Sonnet 4.5 above 200k: `{ above: 200000, input: 2, output: 1.5 }`.
 */
export const longContextTierSchema = z.strictObject({
  above: z
    .number({ error: 'must be a number' })
    .int('must be a whole number')
    .positive('must be more than 0'),
  input: positive,
  output: positive,
  cache: positive.optional(),
});
export type LongContextTier = z.infer<typeof longContextTierSchema>;

/** `LongContextTiers`: model -> its tiers; the tier with the highest `above` the prompt passes applies. */
export const longContextTiersSchema = z.record(
  modelKey,
  z
    .array(longContextTierSchema)
    .min(1, 'list at least one tier')
    .refine((tiers) => new Set(tiers.map((tier) => tier.above)).size === tiers.length, {
      message: 'two tiers start at the same number of tokens',
    }),
);
export type LongContextTiers = z.infer<typeof longContextTiersSchema>;
export const LONG_CONTEXT_TIERS_SHAPE =
  'a JSON object mapping each model name (or a prefix ending in *) to a list of tiers {"above": prompt tokens, "input": ×, "output": ×, "cache"?: ×}';

/**
 * A service tier's name as the answer reports it (`service_tier`): OpenAI's `priority`, `flex`, `scale`, `default`;
 * Anthropic's `standard`, `priority`, `batch`. Lower-case letters, digits, `-` and `_`.
 */
export const serviceTierName = z
  .string()
  .trim()
  .regex(/^[a-z0-9_-]{1,32}$/, 'a service tier is lower-case letters, digits, "-" or "_"');

/**
 * `ServiceTierRatio`: model -> service tier -> multiplier of the whole token bill (input, cache and output), as
 * the answer reports the tier it was served at. A tier not listed costs 1 (the standard price).
 */
/**
 * The service tier a provider's Batch API serves at: a line of a batch sent to OpenAI's or Anthropic's Batch API is
 * billed as if the answer had said `service_tier: "batch"`, so `ServiceTierRatio[model].batch` sets its price.
 */
export const BATCH_SERVICE_TIER = 'batch';

/**
 * The batch multiplier of a model with no `batch` entry in `ServiceTierRatio`: half, as OpenAI ("Batch API: save 50%
 * on inputs and outputs", openai.com/api/pricing) and Anthropic ("Batch processing: 50% discount",
 * docs.anthropic.com pricing) price every batched model.
 */
export const DEFAULT_BATCH_RATIO = 0.5;

export const serviceTierRatioSchema = z.record(modelKey, z.record(serviceTierName, nonNegative));
export type ServiceTierRatio = z.infer<typeof serviceTierRatioSchema>;
export const SERVICE_TIER_RATIO_SHAPE =
  'a JSON object mapping each model name (or a prefix ending in *) to an object of service tier ("priority", "flex", …) to a multiplier of 0 or more';

/** The per-request fees a provider publishes, in USD per unit. */
export const REQUEST_FEE_KINDS = ['web_search', 'image'] as const;
export type RequestFeeKind = (typeof REQUEST_FEE_KINDS)[number];

/**
 * `RequestFees`: model -> fee kind -> USD per unit: `web_search` per search (Anthropic's server tool count,
 * OpenAI's web search calls, Gemini's grounded prompts), `image` per image produced where the provider prices
 * images so. Fees are added to the token bill and multiplied by the group ratio like it.
 */
export const requestFeesSchema = z.record(
  modelKey,
  z.strictObject({ web_search: nonNegative.optional(), image: nonNegative.optional() }),
);
export type RequestFees = z.infer<typeof requestFeesSchema>;
export const REQUEST_FEES_SHAPE =
  'a JSON object mapping each model name (or a prefix ending in *) to {"web_search"?: USD per search, "image"?: USD per image}';

/** A map's entry for a model: its exact key, else the longest `prefix*` key it starts with. */
export function entryForModel<T>(map: Readonly<Record<string, T>> | undefined, model: string): T | undefined {
  if (map === undefined) return undefined;
  if (Object.hasOwn(map, model)) return map[model];
  let best: string | undefined;
  for (const key of Object.keys(map)) {
    if (!key.endsWith('*')) continue;
    const prefix = key.slice(0, -1);
    if (model.startsWith(prefix) && (best === undefined || prefix.length > best.length - 1)) best = key;
  }
  return best === undefined ? undefined : map[best];
}
