/**
 * The entries of the price-shape maps (`LongContextTiers`, `ServiceTierRatio`, `RequestFees`; shapes in
 * core/src/billing/price-shapes.ts) that a ModelPrice owns one number at a time, as it owns `ModelRatio[gpt-4o]`
 * (docs/adr/0017). Each number of a model's shape is one entry, named by the model and where the number sits:
 *
 * - `LongContextTiers[claude-sonnet-4-5/200000/input]`: the input multiplier of the tier above 200,000 tokens
 *   (`output` and `cache` likewise);
 * - `ServiceTierRatio[gpt-5/priority]`: the multiplier of one service tier;
 * - `RequestFees[claude-sonnet-4-5/web_search]`: USD per search (`image`: per image).
 *
 * The model comes first and may hold "/" itself: the last one or two parts are never model (a threshold, a field,
 * a tier or a fee kind hold no "/"). These are the names `changedMapEntries` gives the same numbers when the
 * console saves a map, so the console can change a model's other tiers, but not one a resource owns. Pure: the
 * console reads it too.
 */
import {
  LONG_CONTEXT_TIERS_SHAPE,
  longContextTiersSchema,
  REQUEST_FEE_KINDS,
  REQUEST_FEES_SHAPE,
  requestFeesSchema,
  SERVICE_TIER_RATIO_SHAPE,
  serviceTierRatioSchema,
} from '../billing/price-shapes.ts';
import { json } from './kinds.ts';

/** The price-shape maps, keyed by model, whose numbers a ModelPrice owns. */
export const SHAPE_OPTION_KEYS = ['LongContextTiers', 'ServiceTierRatio', 'RequestFees'] as const;
export type ShapeOptionKey = (typeof SHAPE_OPTION_KEYS)[number];
export const isShapeOptionKey = (key: string): key is ShapeOptionKey =>
  (SHAPE_OPTION_KEYS as readonly string[]).includes(key);

/** The multipliers of one long-context tier, each an entry of its own. */
export const LONG_CONTEXT_FIELDS = ['input', 'output', 'cache'] as const;
export type LongContextField = (typeof LONG_CONTEXT_FIELDS)[number];

const TIER_NAME = /^[a-z0-9_-]{1,32}$/;
const THRESHOLD = /^[1-9][0-9]{0,15}$/;

/** Where a number sits in a model's value: `[above, field]` in a tier list, `[name]` in an object. */
export type ShapePath = readonly [string] | readonly [string, string];

export interface ShapeEntry {
  readonly model: string;
  readonly path: ShapePath;
}

/** The entry name of one number of a model's shape. */
export const shapeEntryName = (model: string, path: ShapePath): string => [model, ...path].join('/');

/** An entry name read back, or undefined when it names no number of that map. */
export function splitShapeEntry(key: ShapeOptionKey, entry: string): ShapeEntry | undefined {
  const parts = entry.split('/');
  const depth = key === 'LongContextTiers' ? 2 : 1;
  if (parts.length <= depth) return undefined;
  const path = parts.slice(-depth);
  const model = parts.slice(0, -depth).join('/');
  if (!model || model.trim() !== model) return undefined;
  if (key === 'LongContextTiers') {
    const [above, field] = path as [string, string];
    if (!THRESHOLD.test(above) || !Number.isSafeInteger(Number(above))) return undefined;
    if (!(LONG_CONTEXT_FIELDS as readonly string[]).includes(field)) return undefined;
    return { model, path: [above, field] };
  }
  const [name] = path as [string];
  const known =
    key === 'ServiceTierRatio'
      ? TIER_NAME.test(name)
      : (REQUEST_FEE_KINDS as readonly string[]).includes(name);
  return known ? { model, path: [name] } : undefined;
}

/** Why a number cannot be one of the map's entries, or undefined. */
export function shapeEntryProblem(key: ShapeOptionKey, entry: string, value: number): string | undefined {
  const what = `${key}[${entry}]`;
  if (!splitShapeEntry(key, entry))
    return key === 'LongContextTiers'
      ? `${what} must name a model, a threshold of prompt tokens and one of ${LONG_CONTEXT_FIELDS.join(', ')}, as model/200000/input`
      : key === 'ServiceTierRatio'
        ? `${what} must name a model and a service tier (lower-case letters, digits, "-" or "_"), as model/priority`
        : `${what} must name a model and one of ${REQUEST_FEE_KINDS.join(', ')}, as model/web_search`;
  if (!Number.isFinite(value)) return `${what} must be a number`;
  if (key === 'LongContextTiers' ? value <= 0 : value < 0)
    return key === 'LongContextTiers'
      ? `${what} must be more than 0`
      : `${what} must be a number of 0 or more`;
  return undefined;
}

type ShapeMap = Record<string, unknown>;
type Tier = Record<string, unknown> & { above?: unknown };

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/**
 * One number of a model's value set (or removed, `value` undefined), in a copy: the model's value is copied, the
 * map and the other models' values are shared. A tier left without multipliers is dropped, and so is a model
 * left with nothing.
 */
function withNumber(key: ShapeOptionKey, map: ShapeMap, at: ShapeEntry, value: number | undefined): ShapeMap {
  const out: ShapeMap = { ...map };
  const current = Object.hasOwn(map, at.model) ? map[at.model] : undefined;
  if (key === 'LongContextTiers') {
    const [above, field] = at.path as [string, string];
    const threshold = Number(above);
    const tiers = (Array.isArray(current) ? current : []).map((tier: Tier) => ({ ...tier }));
    let tier = tiers.find((t) => t.above === threshold);
    if (!tier) {
      if (value === undefined) return map;
      tier = { above: threshold };
      tiers.push(tier);
    }
    if (value === undefined) delete tier[field];
    else tier[field] = value;
    const kept = tiers
      .filter((t) => LONG_CONTEXT_FIELDS.some((f) => Object.hasOwn(t, f)))
      .sort((a, b) => Number(a.above) - Number(b.above));
    if (kept.length === 0) delete out[at.model];
    else out[at.model] = kept;
    return out;
  }
  const [name] = at.path as [string];
  const inner: Record<string, unknown> = isObject(current) ? { ...current } : {};
  if (value === undefined) delete inner[name];
  else inner[name] = value;
  if (Object.keys(inner).length === 0) delete out[at.model];
  else out[at.model] = inner;
  return out;
}

/** The numbers of a shape map by entry name (a value of another shape is skipped). */
export function shapeNumbers(key: ShapeOptionKey, map: ShapeMap): Map<string, number> {
  const out = new Map<string, number>();
  for (const [model, value] of Object.entries(map)) {
    if (key === 'LongContextTiers') {
      if (!Array.isArray(value)) continue;
      for (const tier of value as Tier[])
        for (const field of LONG_CONTEXT_FIELDS)
          if (isObject(tier) && typeof tier[field] === 'number')
            out.set(shapeEntryName(model, [String(tier.above), field]), tier[field] as number);
      continue;
    }
    if (!isObject(value)) continue;
    for (const [name, number] of Object.entries(value))
      if (typeof number === 'number') out.set(shapeEntryName(model, [name]), number);
  }
  return out;
}

/** Owned numbers laid over a shape map (the stored map is not changed). */
export function overlayShapeEntries(
  key: ShapeOptionKey,
  base: ShapeMap,
  entries: readonly { readonly entry: string; readonly value: number }[],
): ShapeMap {
  let out = base;
  for (const { entry, value } of entries) {
    const at = splitShapeEntry(key, entry);
    if (at) out = withNumber(key, out, at, value);
  }
  return out;
}

/**
 * What a console save of a shape map stores: what was sent, with each owned number put back to the stored map's
 * value, or taken out where the stored map had none (see `stripPriceEntries`).
 */
export function stripShapeEntries(
  key: ShapeOptionKey,
  sent: ShapeMap,
  stored: ShapeMap,
  entries: readonly { readonly entry: string }[],
): ShapeMap {
  const before = shapeNumbers(key, stored);
  let out = sent;
  for (const { entry } of entries) {
    const at = splitShapeEntry(key, entry);
    if (at) out = withNumber(key, out, at, before.get(entry));
  }
  return out;
}

/** A model's entries of one shape map, as a map of its own, for checking them with the option registry. */
export function shapeMapOf(
  key: ShapeOptionKey,
  entries: readonly { readonly entry: string; readonly number: number }[],
): ShapeMap {
  return overlayShapeEntries(
    key,
    {},
    entries.map((e) => ({ entry: e.entry, value: e.number })),
  );
}

/**
 * The shape maps read as the option registry reads them (its `json` kind over the same schemas), for the console,
 * which cannot load the registry: a save is checked in the browser with the words the server would answer.
 */
const SHAPE_TEXT = {
  LongContextTiers: json(longContextTiersSchema, {}, LONG_CONTEXT_TIERS_SHAPE),
  ServiceTierRatio: json(serviceTierRatioSchema, {}, SERVICE_TIER_RATIO_SHAPE),
  RequestFees: json(requestFeesSchema, {}, REQUEST_FEES_SHAPE),
};

/** What is wrong with a shape map's text, as `PUT /api/option/` would say it, or undefined. */
export function shapeTextProblem(key: ShapeOptionKey, text: string): string | undefined {
  const parsed = SHAPE_TEXT[key].parse(text);
  return parsed.ok ? undefined : `${key} ${parsed.problem}`;
}
