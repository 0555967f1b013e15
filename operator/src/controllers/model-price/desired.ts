/**
 * ModelPrice resource -> the price map entries it owns: ModelRatio, CompletionRatio, CacheRatio,
 * CreateCacheRatio (cache write), CreateCache1hRatio (1-hour cache write) or ModelPrice per model; with `spec.groups`, the same fields in the group maps
 * (GroupModelRatio, ...) per group and model (`vip/gpt-4o`), so only users and tokens of those groups pay it.
 * Prices arrive as decimal strings and are converted with exact decimal arithmetic: ratio 1 is USD 2 per
 * million input tokens, the completion and cache ratios are relative to the input price. `longContext`,
 * `serviceTiers` and `fees` become numbers of LongContextTiers, ServiceTierRatio and RequestFees, one entry each
 * (core/src/options/shape-entries.ts), for every group alike. Pure.
 */
import {
  groupEntryName,
  type ManagedOptionValue,
  type PriceOptionKey,
} from '@turnpike/core/options/managed-options';
import { shapeEntryName } from '@turnpike/core/options/shape-entries';
import type { ModelPriceResource } from '../../api/v1alpha1.ts';
import { type Refusal, refuse } from '../outcome.ts';

/** USD per million input tokens that model ratio 1 stands for. */
const USD_PER_MILLION_AT_RATIO_ONE = 2n;
const SCALE = 12;
const TEN = 10n;

/** A decimal string as an integer scaled by 10^SCALE; undefined when it is no plain decimal. */
function toScaled(text: string): bigint | undefined {
  const match = /^(\d+)(?:\.(\d+))?$/.exec(text);
  if (!match) return undefined;
  const fraction = (match[2] ?? '').padEnd(SCALE, '0');
  if (fraction.length > SCALE) return undefined;
  return BigInt(match[1]!) * TEN ** BigInt(SCALE) + BigInt(fraction || '0');
}

/** a / b rounded half up to SCALE decimals, as a JS number (what the option maps hold). */
function divide(a: bigint, b: bigint): number {
  const unit = TEN ** BigInt(SCALE);
  const scaled = (a * unit * 2n + b) / (2n * b);
  const whole = scaled / unit;
  const fraction = (scaled % unit).toString().padStart(SCALE, '0').replace(/0+$/, '');
  return Number(fraction ? `${whole}.${fraction}` : `${whole}`);
}

const asNumber = (scaled: bigint) => divide(scaled, TEN ** BigInt(SCALE));

export type DesiredPrices = { readonly ok: true; readonly values: ManagedOptionValue[] } | Refusal;

/** The un-grouped map of each price field, and the group map that holds it for a group. */
const GROUP_KEY_OF = {
  ModelRatio: 'GroupModelRatio',
  CompletionRatio: 'GroupCompletionRatio',
  CacheRatio: 'GroupCacheRatio',
  CreateCacheRatio: 'GroupCreateCacheRatio',
  CreateCache1hRatio: 'GroupCreateCache1hRatio',
  ModelPrice: 'GroupModelPrice',
} as const satisfies Record<string, PriceOptionKey>;
type PriceField = keyof typeof GROUP_KEY_OF;

export function desiredPrices(resource: ModelPriceResource): DesiredPrices {
  const { spec } = resource;
  if (Boolean(spec.ratio) === Boolean(spec.price))
    return refuse('Valid', 'InvalidSpec', 'set exactly one of ratio or price');
  const groups = [...new Set((spec.groups ?? []).map((g) => g.trim()).filter(Boolean))];
  const badGroup = groups.find((g) => g.includes('/'));
  if (badGroup !== undefined) return refuse('Valid', 'InvalidSpec', `group ${badGroup} must not contain "/"`);

  const fields: Partial<Record<PriceField, number>> = {};
  const parse = (name: string, text: string | undefined): bigint | undefined | Refusal => {
    if (text === undefined) return undefined;
    const scaled = toScaled(text);
    return scaled === undefined
      ? refuse('Valid', 'InvalidSpec', `${name} must be a decimal such as "0.75"`)
      : scaled;
  };
  const isRefusal = (v: unknown): v is Refusal => typeof v === 'object' && v !== null && 'ok' in v;

  if (spec.ratio) {
    const model = parse('ratio.model', spec.ratio.model);
    const completion = parse('ratio.completion', spec.ratio.completion);
    const cacheRead = parse('ratio.cacheRead', spec.ratio.cacheRead);
    const cacheWrite = parse('ratio.cacheWrite', spec.ratio.cacheWrite);
    const cacheWrite1h = parse('ratio.cacheWrite1h', spec.ratio.cacheWrite1h);
    for (const v of [model, completion, cacheRead, cacheWrite, cacheWrite1h]) if (isRefusal(v)) return v;
    if (model === undefined) return refuse('Valid', 'InvalidSpec', 'ratio.model is required');
    fields.ModelRatio = asNumber(model as bigint);
    if (completion !== undefined) fields.CompletionRatio = asNumber(completion as bigint);
    if (cacheRead !== undefined) fields.CacheRatio = asNumber(cacheRead as bigint);
    if (cacheWrite !== undefined) fields.CreateCacheRatio = asNumber(cacheWrite as bigint);
    if (cacheWrite1h !== undefined) fields.CreateCache1hRatio = asNumber(cacheWrite1h as bigint);
  } else if (spec.price) {
    const perCall = parse('price.perCall', spec.price.perCall);
    const input = parse('price.input', spec.price.input);
    const output = parse('price.output', spec.price.output);
    const cacheRead = parse('price.cacheRead', spec.price.cacheRead);
    const cacheWrite = parse('price.cacheWrite', spec.price.cacheWrite);
    const cacheWrite1h = parse('price.cacheWrite1h', spec.price.cacheWrite1h);
    const perToken = [output, cacheRead, cacheWrite, cacheWrite1h];
    for (const v of [perCall, input, ...perToken]) if (isRefusal(v)) return v;
    if (perCall !== undefined) {
      if (input !== undefined || perToken.some((p) => p !== undefined))
        return refuse('Valid', 'InvalidSpec', 'a per-call price stands alone');
      fields.ModelPrice = asNumber(perCall as bigint);
    } else {
      if (input === undefined) return refuse('Valid', 'InvalidSpec', 'per-token prices need price.input');
      const unit = TEN ** BigInt(SCALE);
      fields.ModelRatio = divide(input as bigint, USD_PER_MILLION_AT_RATIO_ONE * unit);
      if ((input as bigint) === 0n) {
        if (perToken.some((p) => p !== undefined && p !== 0n))
          return refuse(
            'Valid',
            'InvalidSpec',
            'with a free input, output and cache prices must be free too',
          );
      } else {
        if (output !== undefined) fields.CompletionRatio = divide(output as bigint, input as bigint);
        if (cacheRead !== undefined) fields.CacheRatio = divide(cacheRead as bigint, input as bigint);
        if (cacheWrite !== undefined) fields.CreateCacheRatio = divide(cacheWrite as bigint, input as bigint);
        if (cacheWrite1h !== undefined)
          fields.CreateCache1hRatio = divide(cacheWrite1h as bigint, input as bigint);
      }
    }
  }

  const models = [...new Set(spec.models.map((m) => m.trim()).filter(Boolean))];
  if (models.length === 0) return refuse('Valid', 'InvalidSpec', 'list at least one model');
  const shapes = desiredShapes(spec, fields.ModelPrice !== undefined, groups.length > 0);
  if (!shapes.ok) return shapes;
  const values: ManagedOptionValue[] = [];
  const priced = Object.entries(fields) as [PriceField, number][];
  if (groups.length === 0) {
    for (const model of models)
      for (const [key, number] of priced) values.push({ key, entry: model, number });
  } else {
    for (const group of groups)
      for (const model of models)
        for (const [field, number] of priced)
          values.push({ key: GROUP_KEY_OF[field], entry: groupEntryName(group, model), number });
  }
  for (const model of models)
    for (const { key, path, number } of shapes.numbers)
      values.push({ key, entry: shapeEntryName(model, path), number });
  return { ok: true, values };
}

/** One number of a model's price shapes, before the model is named. */
interface ShapeNumber {
  readonly key: 'LongContextTiers' | 'ServiceTierRatio' | 'RequestFees';
  readonly path: readonly [string] | readonly [string, string];
  readonly number: number;
}

const SERVICE_TIER = /^[a-z0-9_-]{1,32}$/;

/**
 * `longContext`, `serviceTiers` and `fees` as the numbers every model of the resource gets. The schema checks
 * the same; this is what holds for a resource stored under an older schema. A tier's cache multiplier is written
 * even when it is the input's, so a number the console once kept for that tier cannot stand in for it.
 */
function desiredShapes(
  spec: ModelPriceResource['spec'],
  perCall: boolean,
  grouped: boolean,
): { readonly ok: true; readonly numbers: ShapeNumber[] } | Refusal {
  const { longContext, serviceTiers, fees } = spec;
  const numbers: ShapeNumber[] = [];
  if (!longContext && !serviceTiers && !fees) return { ok: true, numbers };
  const invalid = (message: string) => refuse('Valid', 'InvalidSpec', message);
  if (grouped)
    return invalid(
      'longContext, serviceTiers and fees apply to every group; set them on a ModelPrice without groups',
    );
  if (perCall && (longContext || serviceTiers))
    return invalid('a per-call price has no tokens; longContext and serviceTiers need per-token prices');
  const decimal = (name: string, text: string, positive: boolean): number | Refusal => {
    const scaled = toScaled(text);
    if (scaled === undefined) return invalid(`${name} must be a decimal such as "1.5"`);
    if (positive && scaled === 0n) return invalid(`${name} must be more than 0`);
    return asNumber(scaled);
  };
  const seen = new Set<number>();
  for (const [i, tier] of (longContext ?? []).entries()) {
    if (!Number.isSafeInteger(tier.above) || tier.above < 1)
      return invalid(`longContext[${i}].above must be a whole number of tokens above 0`);
    if (seen.has(tier.above)) return invalid('two long-context tiers start at the same number of tokens');
    seen.add(tier.above);
    const input = decimal(`longContext[${i}].input`, tier.input, true);
    const output = decimal(`longContext[${i}].output`, tier.output, true);
    const cache = tier.cache === undefined ? input : decimal(`longContext[${i}].cache`, tier.cache, true);
    for (const [field, value] of [
      ['input', input],
      ['output', output],
      ['cache', cache],
    ] as const) {
      if (typeof value !== 'number') return value;
      numbers.push({ key: 'LongContextTiers', path: [String(tier.above), field], number: value });
    }
  }
  for (const [tier, text] of Object.entries(serviceTiers ?? {})) {
    if (!SERVICE_TIER.test(tier))
      return invalid(`serviceTiers.${tier}: a service tier is lower-case letters, digits, "-" or "_"`);
    const value = decimal(`serviceTiers.${tier}`, text, false);
    if (typeof value !== 'number') return value;
    numbers.push({ key: 'ServiceTierRatio', path: [tier], number: value });
  }
  for (const [name, kind] of [
    ['webSearch', 'web_search'],
    ['image', 'image'],
  ] as const) {
    const text = fees?.[name];
    if (text === undefined) continue;
    const value = decimal(`fees.${name}`, text, false);
    if (typeof value !== 'number') return value;
    numbers.push({ key: 'RequestFees', path: [kind], number: value });
  }
  return { ok: true, numbers };
}
