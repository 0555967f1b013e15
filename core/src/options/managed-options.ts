/**
 * Option values owned by Kubernetes resources (docs/adr/0017): a GatewayOption owns whole options, a ModelPrice
 * owns single entries of the price maps (ModelRatio, CompletionRatio, CacheRatio, ModelPrice, CreateCacheRatio,
 * CreateCache1hRatio, the group maps GroupModelRatio and its siblings, and the numbers of the price-shape maps
 * LongContextTiers, ServiceTierRatio and RequestFees, named as shape-entries.ts says). Values are checked by the
 * option registry and its cross-option rules, exactly as `PUT /api/option/` checks them, then stored with their
 * owner in one transaction and announced with `options.changed`.
 *
 * A price entry is a row of its own in `option_sources` (with its number), never a rewrite of the map's
 * `options` row: the option store lays the owned entries over the map when it loads (`overlayPriceEntries`), so a
 * change to one ModelPrice writes only that resource's rows, and an unchanged resource writes nothing.
 *
 * Many resources are applied in one batch (one transaction, one event): a cold start of thousands of prices
 * must not announce a change once per resource. Each resource still succeeds or fails on its own.
 */
import { and, eq, inArray, or, sql } from 'drizzle-orm';
import type { Db, Executor } from '../db/client.ts';
import { optionSources } from '../db/schema/option-sources.ts';
import { options as optionsTable } from '../db/schema/options.ts';
import type { EventBus } from '../events/bus.ts';
import { describeSource, type ResourceSource, type SourceRef } from '../ownership/source.ts';
import {
  defaultOptionText,
  isOptionKey,
  type OptionKey,
  type OptionReader,
  type OptionValue,
  readOptionText,
  unknownOptionMessage,
  validateOptions,
} from './registry.ts';
import {
  isShapeOptionKey,
  overlayShapeEntries,
  SHAPE_OPTION_KEYS,
  shapeEntryProblem,
  shapeMapOf,
  stripShapeEntries,
} from './shape-entries.ts';

/** The price maps of one level (model -> number). */
export const MODEL_PRICE_OPTION_KEYS = [
  'ModelRatio',
  'CompletionRatio',
  'CacheRatio',
  'ModelPrice',
  'CreateCacheRatio',
  'CreateCache1hRatio',
] as const;
/** The group maps (group -> model -> number); an entry of one is named `group/model`. */
export const GROUP_PRICE_OPTION_KEYS = [
  'GroupModelRatio',
  'GroupCompletionRatio',
  'GroupCacheRatio',
  'GroupCreateCacheRatio',
  'GroupCreateCache1hRatio',
  'GroupModelPrice',
] as const;
/** The option maps a ModelPrice writes entries of; the shape maps' entries are named in shape-entries.ts. */
export const PRICE_OPTION_KEYS = [
  ...MODEL_PRICE_OPTION_KEYS,
  ...GROUP_PRICE_OPTION_KEYS,
  ...SHAPE_OPTION_KEYS,
] as const;
export type PriceOptionKey = (typeof PRICE_OPTION_KEYS)[number];
export type GroupPriceOptionKey = (typeof GROUP_PRICE_OPTION_KEYS)[number];
export const isPriceOptionKey = (key: string): key is PriceOptionKey =>
  (PRICE_OPTION_KEYS as readonly string[]).includes(key);
export const isGroupPriceOptionKey = (key: string): key is GroupPriceOptionKey =>
  (GROUP_PRICE_OPTION_KEYS as readonly string[]).includes(key);

/** The entry name of a group map entry: `vip/gpt-4o` (a group name holds no "/", a model name may). */
export const groupEntryName = (group: string, model: string) => `${group}/${model}`;

/** A group map entry name split at its first "/", or undefined when it names no group and model. */
export function splitGroupEntry(entry: string): { group: string; model: string } | undefined {
  const slash = entry.indexOf('/');
  if (slash <= 0 || slash === entry.length - 1) return undefined;
  return { group: entry.slice(0, slash), model: entry.slice(slash + 1) };
}

/** An owned price entry as the option store reads it. */
export interface PriceEntry {
  readonly entry: string;
  readonly value: number;
}

type PriceMap = Record<string, unknown>;

/**
 * The map a price option serves: its stored (or default) map with the owned entries laid over it. The stored
 * map's objects are not changed; a group object is copied only when an entry lands in it.
 */
export function overlayPriceEntries(
  key: PriceOptionKey,
  base: PriceMap,
  entries: readonly PriceEntry[],
): PriceMap {
  if (entries.length === 0) return base;
  if (isShapeOptionKey(key)) return overlayShapeEntries(key, base, entries);
  const out: PriceMap = { ...base };
  if (!isGroupPriceOptionKey(key)) {
    for (const { entry, value } of entries) out[entry] = value;
    return out;
  }
  const copied = new Set<string>();
  for (const { entry, value } of entries) {
    const parts = splitGroupEntry(entry);
    if (!parts) continue;
    if (!copied.has(parts.group)) {
      const current = Object.hasOwn(out, parts.group) ? out[parts.group] : undefined;
      out[parts.group] = current && typeof current === 'object' ? { ...current } : {};
      copied.add(parts.group);
    }
    (out[parts.group] as PriceMap)[parts.model] = value;
  }
  return out;
}

/**
 * What a console save of a price map stores: the map it was sent without the owned entries (which the option
 * store lays over it anyway), keeping the value the stored map had for an owned entry, so deleting the resource
 * brings back what the console had set. The console API refuses a save that changes an owned entry before this
 * runs (`refuseManagedOption`).
 */
export function stripPriceEntries(
  key: PriceOptionKey,
  sent: PriceMap,
  stored: PriceMap,
  entries: readonly PriceEntry[],
): PriceMap {
  if (entries.length === 0) return sent;
  if (isShapeOptionKey(key)) return stripShapeEntries(key, sent, stored, entries);
  const out: PriceMap = { ...sent };
  if (!isGroupPriceOptionKey(key)) {
    for (const { entry } of entries)
      if (Object.hasOwn(stored, entry)) out[entry] = stored[entry];
      else delete out[entry];
    return out;
  }
  const copied = new Set<string>();
  for (const { entry } of entries) {
    const parts = splitGroupEntry(entry);
    if (!parts) continue;
    const sentGroup = Object.hasOwn(out, parts.group) ? (out[parts.group] as PriceMap) : undefined;
    const storedGroup = Object.hasOwn(stored, parts.group) ? (stored[parts.group] as PriceMap) : undefined;
    if (!sentGroup) continue;
    if (!copied.has(parts.group)) {
      out[parts.group] = { ...sentGroup };
      copied.add(parts.group);
    }
    const group = out[parts.group] as PriceMap;
    if (storedGroup && Object.hasOwn(storedGroup, parts.model)) group[parts.model] = storedGroup[parts.model];
    else delete group[parts.model];
  }
  for (const group of copied)
    if (Object.keys(out[group] as PriceMap).length === 0 && !Object.hasOwn(stored, group)) delete out[group];
  return out;
}

/** One owned value: a whole option (`entry` '') as text, or a price map entry as a number. */
export type ManagedOptionValue =
  | { readonly key: string; readonly entry: ''; readonly text: string }
  | { readonly key: PriceOptionKey; readonly entry: string; readonly number: number };

export interface ManagedOptionsRequest {
  readonly source: ResourceSource;
  /** What the resource wants; `undefined` removes everything it owns (deletion). */
  readonly values: readonly ManagedOptionValue[] | undefined;
}

export type ManagedOptionsOutcome =
  | { readonly ok: true; readonly changedKeys: readonly string[]; readonly version: number }
  | { readonly ok: false; readonly reason: 'Conflict' | 'InvalidOption'; readonly message: string };

/** The owner of an option value, when a resource owns it. */
export interface OptionOwner extends ResourceSource {
  readonly key: string;
  readonly entry: string;
}

const LOCK_ID = 0x7470_6f70; // one writer of owned options at a time, across processes

const sameSource = (a: SourceRef, b: SourceRef) =>
  a.kind === b.kind && a.namespace === b.namespace && a.name === b.name;

const ownerKey = (key: string, entry: string) => `${key}\u0000${entry}`;

type SourceRow = typeof optionSources.$inferSelect;

const ownerOf = (r: SourceRow): OptionOwner => ({
  key: r.optionKey,
  entry: r.entry,
  kind: r.sourceKind as OptionOwner['kind'],
  namespace: r.sourceNamespace,
  name: r.sourceName,
  generation: r.sourceGeneration,
});

/** Every owner of the given options (all entries), or of all options when `keys` is omitted. */
export async function listOptionOwners(db: Executor, keys?: readonly string[]): Promise<OptionOwner[]> {
  const rows =
    keys === undefined
      ? await db.select().from(optionSources)
      : keys.length === 0
        ? []
        : await db
            .select()
            .from(optionSources)
            .where(inArray(optionSources.optionKey, [...keys]));
  return rows.map(ownerOf);
}

/**
 * The entries that differ between two texts of a price map: added, removed or changed. A group map's entries
 * are named `group/model`, as their owners are; a shape map's `model/priority` or, in a list of long-context
 * tiers, `model/200000/input` (shape-entries.ts).
 */
export function changedMapEntries(before: string, after: string): string[] {
  const flatten = (text: string): Map<string, string> => {
    let value: unknown;
    try {
      value = JSON.parse(text) as unknown;
    } catch {
      return new Map();
    }
    const out = new Map<string, string>();
    const put = (entry: string, v: unknown) => out.set(entry, JSON.stringify(v));
    if (!value || typeof value !== 'object') return out;
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      if (Array.isArray(v))
        for (const [index, item] of (v as unknown[]).entries()) {
          const tier = item && typeof item === 'object' ? (item as Record<string, unknown>) : undefined;
          if (!tier || typeof tier.above !== 'number') put(`${k}/${index}`, item);
          else
            for (const [field, number] of Object.entries(tier))
              if (field !== 'above') put(`${k}/${tier.above}/${field}`, number);
        }
      else if (v && typeof v === 'object')
        for (const [inner, number] of Object.entries(v as Record<string, unknown>))
          put(groupEntryName(k, inner), number);
      else put(k, v);
    }
    return out;
  };
  const a = flatten(before);
  const b = flatten(after);
  return [...new Set([...a.keys(), ...b.keys()])].filter((k) => a.get(k) !== b.get(k));
}

/** Working copy of the stored options: text per key (absent = default), parsed lazily. */
function createWorkingSet(rows: readonly { key: string; value: string }[]) {
  const texts = new Map<string, string>(rows.map((r) => [r.key, r.value]));
  const parsed = new Map<string, unknown>();
  const textOf = (key: OptionKey) => texts.get(key) ?? defaultOptionText(key);
  const read: OptionReader = <K extends OptionKey>(key: K) => {
    if (!parsed.has(key)) {
      const result = readOptionText(key, textOf(key));
      const fallback = readOptionText(key, defaultOptionText(key));
      parsed.set(key, result.ok ? result.parsed : fallback.ok ? fallback.parsed : undefined);
    }
    return parsed.get(key) as OptionValue<K>;
  };
  return {
    read,
    textOf,
    has: (key: string) => texts.has(key),
    set(key: OptionKey, text: string | undefined, value: unknown) {
      if (text === undefined) texts.delete(key);
      else texts.set(key, text);
      parsed.set(key, value);
    },
  };
}

/** Why a price entry cannot be stored, or undefined. */
function entryProblem(v: { key: string; entry: string; number: number }): string | undefined {
  const what = `${v.key}[${v.entry}]`;
  if (!isPriceOptionKey(v.key)) return `${v.key} has no entries a resource can own`;
  if (isShapeOptionKey(v.key)) return shapeEntryProblem(v.key, v.entry, v.number);
  if (!Number.isFinite(v.number) || v.number < 0) return `${what} must be a number of 0 or more`;
  if (!isGroupPriceOptionKey(v.key))
    return v.entry.trim() === v.entry ? undefined : `${what} must name a model without surrounding spaces`;
  const parts = splitGroupEntry(v.entry);
  if (
    !parts ||
    parts.group.trim() !== parts.group ||
    parts.model.trim() !== parts.model ||
    !parts.group ||
    !parts.model
  )
    return `${what} must name a group (without "/") and a model, as group/model, without surrounding spaces`;
  return undefined;
}

/**
 * Why a resource's numbers of the shape maps do not make whole values (a tier needs its input and output
 * multipliers, and so on), in the option registry's words, or undefined. Each map is checked with the resource's
 * own numbers only, so what it owns is valid whatever the console keeps beside it.
 */
function shapeProblem(values: readonly { key: string; entry: string; number: number }[]): string | undefined {
  for (const key of SHAPE_OPTION_KEYS) {
    const mine = values.filter((v) => v.key === key);
    if (mine.length === 0) continue;
    const check = readOptionText(key, JSON.stringify(shapeMapOf(key, mine)));
    if (!check.ok) return check.message;
  }
  return undefined;
}

/** Rows per insert statement: well under PostgreSQL's 65,535 parameters at 7 columns a row. */
const INSERT_CHUNK = 2_000;

export function createManagedOptionWriter(deps: { db: Db; bus: EventBus }) {
  const { db, bus } = deps;

  /**
   * Applies several resources' wanted values. Per resource: refused (nothing of it written) when another
   * resource owns one of its values or the registry rejects the result; otherwise its values and ownership rows
   * are written: a price entry is written only when its number or generation changed, and no other resource's
   * row and no price map's `options` row is written. Answers one outcome per request, in order.
   */
  async function applyBatch(requests: readonly ManagedOptionsRequest[]): Promise<ManagedOptionsOutcome[]> {
    const result = await db.transaction(async (tx) => {
      await tx.execute(sql`select pg_advisory_xact_lock(${LOCK_ID})`);
      // Only the owners that matter to this batch: of its resources, and of the values they want.
      const names = [...new Set(requests.map((r) => r.source.name))];
      const entries = [...new Set(requests.flatMap((r) => (r.values ?? []).map((v) => v.entry)))];
      const keys = [...new Set(requests.flatMap((r) => (r.values ?? []).map((v) => v.key)))];
      const relevant = await tx
        .select()
        .from(optionSources)
        .where(
          or(
            inArray(optionSources.sourceName, names),
            entries.length > 0 && keys.length > 0
              ? and(inArray(optionSources.entry, entries), inArray(optionSources.optionKey, keys))
              : undefined,
          ),
        );
      const owners = new Map(relevant.map((r) => [ownerKey(r.optionKey, r.entry), ownerOf(r)]));
      const stored = new Map(relevant.map((r) => [ownerKey(r.optionKey, r.entry), r.value]));
      // Owners by resource, so each request finds its own values without scanning every owner.
      const sourceKey = (s: SourceRef) => `${s.kind}/${s.namespace}/${s.name}`;
      const bySource = new Map<string, Map<string, OptionOwner>>();
      for (const [id, o] of owners) {
        const own = bySource.get(sourceKey(o)) ?? new Map<string, OptionOwner>();
        bySource.set(sourceKey(o), own);
        own.set(id, o);
      }
      // The stored options, read only when a resource of this batch sets or releases a whole option.
      let work: ReturnType<typeof createWorkingSet> | undefined;
      const workingSet = async () => {
        work ??= createWorkingSet(await tx.select().from(optionsTable));
        return work;
      };
      const dirtyKeys = new Set<OptionKey>();
      const deletedKeys = new Set<OptionKey>();
      const announced = new Set<string>();
      const outcomes: ({ ok: true; keys: Set<string> } | Extract<ManagedOptionsOutcome, { ok: false }>)[] =
        [];
      const removals: OptionOwner[] = [];
      const upserts: (OptionOwner & { value: number | null })[] = [];

      for (const { source, values } of requests) {
        const mine = [...(bySource.get(sourceKey(source))?.values() ?? [])];
        const wanted = values ?? [];
        const refuseWith = (reason: 'Conflict' | 'InvalidOption', message: string) =>
          outcomes.push({ ok: false, reason, message });
        // Another resource owning a wanted value refuses this whole resource.
        const taken = wanted
          .map((v) => owners.get(ownerKey(v.key, v.entry)))
          .find((o) => o !== undefined && !sameSource(o, source));
        if (taken) {
          const what = taken.entry ? `${taken.key}[${taken.entry}]` : taken.key;
          refuseWith('Conflict', `${what} is already owned by ${describeSource(taken)}`);
          continue;
        }
        const unknown = wanted.find((v) => !isOptionKey(v.key));
        if (unknown) {
          refuseWith('InvalidOption', unknownOptionMessage(unknown.key));
          continue;
        }
        const wantedIds = new Set(wanted.map((v) => ownerKey(v.key, v.entry)));
        const released = mine.filter((o) => !wantedIds.has(ownerKey(o.key, o.entry)));

        // Price entries are checked one by one (a model or group/model name, a number of 0 or more), which is
        // all a price map's schema asks, so no map is parsed or rewritten for them. Whole options go through the
        // registry and its cross-option rules, like PUT /api/option/.
        const numbers = wanted.filter(
          (v): v is Extract<ManagedOptionValue, { number: number }> => v.entry !== '',
        );
        const problem = numbers.map(entryProblem).find((p) => p !== undefined) ?? shapeProblem(numbers);
        if (problem) {
          refuseWith('InvalidOption', problem);
          continue;
        }
        const whole = new Map<OptionKey, string | undefined>();
        for (const o of released) if (isOptionKey(o.key) && !o.entry) whole.set(o.key, undefined); // back to its default
        for (const v of wanted) if (!v.entry) whole.set(v.key as OptionKey, (v as { text: string }).text);
        const changed = new Set<string>();
        if (whole.size > 0) {
          const ws = await workingSet();
          const check = validateOptions(
            [...whole].map(([key, text]) => [key, text ?? defaultOptionText(key)] as const),
            ws.read,
          );
          if (!check.ok) {
            refuseWith('InvalidOption', check.message);
            continue;
          }
          for (const option of check.options) {
            if (whole.get(option.key) === undefined) {
              if (!ws.has(option.key)) continue;
              ws.set(option.key, undefined, option.value);
              deletedKeys.add(option.key);
              dirtyKeys.delete(option.key);
            } else {
              if (ws.has(option.key) && ws.textOf(option.key) === option.text) continue;
              ws.set(option.key, option.text, option.value);
              dirtyKeys.add(option.key);
              deletedKeys.delete(option.key);
            }
            changed.add(option.key);
          }
        }
        for (const o of released) {
          removals.push(o);
          if (o.entry) changed.add(o.key);
        }
        const own = bySource.get(sourceKey(source)) ?? new Map<string, OptionOwner>();
        bySource.set(sourceKey(source), own);
        for (const o of released) {
          owners.delete(ownerKey(o.key, o.entry));
          own.delete(ownerKey(o.key, o.entry));
        }
        for (const v of wanted) {
          const id = ownerKey(v.key, v.entry);
          const value = v.entry ? (v as { number: number }).number : null;
          const before = owners.get(id);
          const isNew = before === undefined;
          const valueChanged = isNew || stored.get(id) !== value;
          if (!valueChanged && before.generation === source.generation) continue;
          if (v.entry && valueChanged) changed.add(v.key);
          const owner = { ...source, key: v.key, entry: v.entry };
          owners.set(id, owner);
          own.set(id, owner);
          stored.set(id, value);
          upserts.push({ ...owner, value });
        }
        for (const key of changed) announced.add(key);
        outcomes.push({ ok: true, keys: changed });
      }

      for (const key of deletedKeys) await tx.delete(optionsTable).where(eq(optionsTable.key, key));
      const optionRows = [...dirtyKeys].map((key) => ({
        key,
        value: (work as NonNullable<typeof work>).textOf(key),
      }));
      if (optionRows.length > 0)
        await tx
          .insert(optionsTable)
          .values(optionRows)
          .onConflictDoUpdate({ target: optionsTable.key, set: { value: sql`excluded.value` } });
      // Released rows go by key and entry, and only rows this batch found owned by the releasing resource.
      const releasedByKey = new Map<string, string[]>();
      for (const o of removals) releasedByKey.set(o.key, [...(releasedByKey.get(o.key) ?? []), o.entry]);
      for (const [key, entries] of releasedByKey)
        await tx
          .delete(optionSources)
          .where(and(eq(optionSources.optionKey, key), inArray(optionSources.entry, entries)));
      for (let i = 0; i < upserts.length; i += INSERT_CHUNK)
        await tx
          .insert(optionSources)
          .values(
            upserts.slice(i, i + INSERT_CHUNK).map((o) => ({
              optionKey: o.key,
              entry: o.entry,
              sourceKind: o.kind,
              sourceNamespace: o.namespace,
              sourceName: o.name,
              sourceGeneration: o.generation,
              value: o.value,
            })),
          )
          .onConflictDoUpdate({
            target: [optionSources.optionKey, optionSources.entry],
            set: { sourceGeneration: sql`excluded.source_generation`, value: sql`excluded.value` },
          });
      for (const key of [...dirtyKeys, ...deletedKeys]) announced.add(key);
      return { outcomes, changed: [...announced] };
    });
    const version =
      result.changed.length > 0 ? await bus.publish({ type: 'options.changed', keys: result.changed }) : 0;
    return result.outcomes.map((o) =>
      o.ok ? { ok: true as const, changedKeys: [...o.keys], version: o.keys.size > 0 ? version : 0 } : o,
    );
  }

  return {
    applyBatch,
    async apply(request: ManagedOptionsRequest): Promise<ManagedOptionsOutcome> {
      const [outcome] = await applyBatch([request]);
      return outcome as ManagedOptionsOutcome;
    },
    /** What a resource owns now. */
    async owned(ref: SourceRef): Promise<OptionOwner[]> {
      return (await listOptionOwners(db)).filter((o) => sameSource(o, ref));
    },
  };
}

export type ManagedOptionWriter = ReturnType<typeof createManagedOptionWriter>;

/** The owned price entries of the given price maps, by option key: what the option store lays over them. */
export async function listPriceEntries(
  db: Executor,
  keys: readonly PriceOptionKey[],
): Promise<Map<PriceOptionKey, PriceEntry[]>> {
  const out = new Map<PriceOptionKey, PriceEntry[]>();
  if (keys.length === 0) return out;
  const rows = await db
    .select({ key: optionSources.optionKey, entry: optionSources.entry, value: optionSources.value })
    .from(optionSources)
    .where(
      and(
        inArray(optionSources.optionKey, [...keys]),
        sql`${optionSources.entry} <> ''`,
        sql`${optionSources.value} is not null`,
      ),
    );
  for (const r of rows) {
    const key = r.key as PriceOptionKey;
    const list = out.get(key) ?? [];
    out.set(key, list);
    list.push({ entry: r.entry, value: r.value as number });
  }
  return out;
}
