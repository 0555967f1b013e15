/**
 * Option values owned by Kubernetes resources (docs/adr/0017): a GatewayOption owns whole options, a ModelPrice
 * owns one model's entry in the price maps (ModelRatio, CompletionRatio, CacheRatio, ModelPrice). Values are
 * checked by the option registry and its cross-option rules, exactly as `PUT /api/option/` checks them, then
 * stored with their owner in one transaction and announced with `options.changed`.
 *
 * Many resources are applied in one batch (one transaction, one event): a cold start of thousands of prices
 * must not rewrite the price maps once per resource. Each resource still succeeds or fails on its own.
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

/** The option maps a ModelPrice writes entries of. */
export const PRICE_OPTION_KEYS = ['ModelRatio', 'CompletionRatio', 'CacheRatio', 'ModelPrice'] as const;
export type PriceOptionKey = (typeof PRICE_OPTION_KEYS)[number];
export const isPriceOptionKey = (key: string): key is PriceOptionKey =>
  (PRICE_OPTION_KEYS as readonly string[]).includes(key);

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
  return rows.map((r) => ({
    key: r.optionKey,
    entry: r.entry,
    kind: r.sourceKind as OptionOwner['kind'],
    namespace: r.sourceNamespace,
    name: r.sourceName,
    generation: r.sourceGeneration,
  }));
}

/** The options that differ between two texts of a price map: the entries added, removed or changed. */
export function changedMapEntries(before: string, after: string): string[] {
  const parse = (text: string): Record<string, unknown> => {
    try {
      const value = JSON.parse(text) as unknown;
      return value && typeof value === 'object' ? (value as Record<string, unknown>) : {};
    } catch {
      return {};
    }
  };
  const a = parse(before);
  const b = parse(after);
  return [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((k) => a[k] !== b[k]);
}

/** Working copy of the stored options: text per key (absent = default), parsed lazily. */
/** The last price map this writer read or wrote, by option: reused while the stored text is unchanged. */
type MapCache = Map<string, { text: string; value: Readonly<Record<string, number>> }>;

function createWorkingSet(rows: readonly { key: string; value: string }[], mapCache: MapCache) {
  const texts = new Map<string, string>(rows.map((r) => [r.key, r.value]));
  const parsed = new Map<string, unknown>();
  for (const [key, cached] of mapCache) if (texts.get(key) === cached.text) parsed.set(key, cached.value);
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

export function createManagedOptionWriter(deps: { db: Db; bus: EventBus }) {
  const { db, bus } = deps;
  // Parsing and checking a price map of thousands of entries per batch would dominate a cold start.
  const mapCache: MapCache = new Map();

  /**
   * Applies several resources' wanted values. Per resource: refused (nothing of it written) when another
   * resource owns one of its values or the registry rejects the result; otherwise its values and ownership rows
   * are written. Answers one outcome per request, in order.
   */
  async function applyBatch(requests: readonly ManagedOptionsRequest[]): Promise<ManagedOptionsOutcome[]> {
    const result = await db.transaction(async (tx) => {
      await tx.execute(sql`select pg_advisory_xact_lock(${LOCK_ID})`);
      const rows = await tx.select().from(optionsTable);
      const work = createWorkingSet(rows, mapCache);
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
      const owners = new Map(
        relevant.map((r) => [
          ownerKey(r.optionKey, r.entry),
          {
            key: r.optionKey,
            entry: r.entry,
            kind: r.sourceKind as OptionOwner['kind'],
            namespace: r.sourceNamespace,
            name: r.sourceName,
            generation: r.sourceGeneration,
          },
        ]),
      );
      // Owners by resource, so each request finds its own values without scanning every owner.
      const sourceKey = (s: SourceRef) => `${s.kind}/${s.namespace}/${s.name}`;
      const bySource = new Map<string, Map<string, OptionOwner>>();
      for (const [id, o] of owners) {
        const own = bySource.get(sourceKey(o)) ?? new Map<string, OptionOwner>();
        bySource.set(sourceKey(o), own);
        own.set(id, o);
      }
      const dirtyKeys = new Set<OptionKey>();
      const deletedKeys = new Set<OptionKey>();
      const outcomes: ({ ok: true; keys: Set<string> } | Extract<ManagedOptionsOutcome, { ok: false }>)[] =
        [];
      const ownershipWrites: { remove: OptionOwner[]; upsert: OptionOwner[] }[] = [];

      // The price maps this batch changes, as objects, serialised once at the end.
      const maps = new Map<OptionKey, Record<string, number>>();
      const dirtyMaps = new Set<OptionKey>();
      const mapOf = (key: OptionKey) => {
        let map = maps.get(key);
        if (!map) {
          map = { ...(work.read(key) as Record<string, number>) };
          maps.set(key, map);
        }
        return map;
      };
      for (const { source, values } of requests) {
        const mine = [...(bySource.get(sourceKey(source))?.values() ?? [])];
        const wanted = values ?? [];
        // Another resource owning a wanted value refuses this whole resource.
        const taken = wanted
          .map((v) => owners.get(ownerKey(v.key, v.entry)))
          .find((o) => o !== undefined && !sameSource(o, source));
        if (taken) {
          const what = taken.entry ? `${taken.key}[${taken.entry}]` : taken.key;
          outcomes.push({
            ok: false,
            reason: 'Conflict',
            message: `${what} is already owned by ${describeSource(taken)}`,
          });
          ownershipWrites.push({ remove: [], upsert: [] });
          continue;
        }
        const unknown = wanted.find((v) => !isOptionKey(v.key));
        if (unknown) {
          outcomes.push({ ok: false, reason: 'InvalidOption', message: unknownOptionMessage(unknown.key) });
          ownershipWrites.push({ remove: [], upsert: [] });
          continue;
        }
        const wantedIds = new Set(wanted.map((v) => ownerKey(v.key, v.entry)));
        const released = mine.filter((o) => !wantedIds.has(ownerKey(o.key, o.entry)));

        // Price map entries are checked one by one and kept as objects for the whole batch (serialised once at
        // the end): checking and rewriting a map of thousands of entries per resource would make a cold start
        // quadratic. Whole options go through the registry and its cross-option rules, like PUT /api/option/.
        const entryProblem = wanted.find(
          (v) =>
            v.entry !== '' &&
            (v.entry.trim() !== v.entry ||
              !Number.isFinite((v as { number: number }).number) ||
              (v as { number: number }).number < 0),
        );
        if (entryProblem) {
          outcomes.push({
            ok: false,
            reason: 'InvalidOption',
            message: `${entryProblem.key}[${entryProblem.entry}] must name a model without surrounding spaces and be a number of 0 or more`,
          });
          ownershipWrites.push({ remove: [], upsert: [] });
          continue;
        }
        const whole = new Map<OptionKey, string | undefined>();
        for (const o of released) if (isOptionKey(o.key) && !o.entry) whole.set(o.key, undefined); // back to its default
        for (const v of wanted) if (!v.entry) whole.set(v.key as OptionKey, (v as { text: string }).text);
        const check = validateOptions(
          [...whole].map(([key, text]) => [key, text ?? defaultOptionText(key)] as const),
          work.read,
        );
        if (!check.ok) {
          outcomes.push({ ok: false, reason: 'InvalidOption', message: check.message });
          ownershipWrites.push({ remove: [], upsert: [] });
          continue;
        }
        const changed = new Set<string>();
        for (const option of check.options) {
          const removing = whole.get(option.key) === undefined;
          if (removing) {
            if (!work.has(option.key)) continue;
            work.set(option.key, undefined, option.value);
            deletedKeys.add(option.key);
            dirtyKeys.delete(option.key);
          } else {
            if (work.has(option.key) && work.textOf(option.key) === option.text) continue;
            work.set(option.key, option.text, option.value);
            dirtyKeys.add(option.key);
            deletedKeys.delete(option.key);
          }
          changed.add(option.key);
        }
        for (const o of released)
          if (o.entry && isOptionKey(o.key) && o.entry in mapOf(o.key)) {
            delete mapOf(o.key)[o.entry];
            dirtyMaps.add(o.key);
            changed.add(o.key);
          }
        for (const v of wanted) {
          if (!v.entry) continue;
          const map = mapOf(v.key as OptionKey);
          const number = (v as { number: number }).number;
          if (map[v.entry] === number) continue;
          map[v.entry] = number;
          dirtyMaps.add(v.key as OptionKey);
          changed.add(v.key);
        }
        const own = bySource.get(sourceKey(source)) ?? new Map<string, OptionOwner>();
        bySource.set(sourceKey(source), own);
        for (const o of released) {
          owners.delete(ownerKey(o.key, o.entry));
          own.delete(ownerKey(o.key, o.entry));
        }
        const upsert = wanted.map((v) => ({ ...source, key: v.key, entry: v.entry }));
        for (const o of upsert) {
          owners.set(ownerKey(o.key, o.entry), o);
          own.set(ownerKey(o.key, o.entry), o);
        }
        ownershipWrites.push({ remove: released, upsert });
        outcomes.push({ ok: true, keys: changed });
      }

      // Every entry was checked on its own (a model name, a number of 0 or more), which is all a price map's
      // schema asks, so the map is serialised without parsing it again.
      for (const key of dirtyMaps) {
        const map = maps.get(key) as Record<string, number>;
        const text = JSON.stringify(map);
        work.set(key, text, map);
        mapCache.set(key, { text, value: map });
        dirtyKeys.add(key);
        deletedKeys.delete(key);
      }
      for (const key of deletedKeys) await tx.delete(optionsTable).where(eq(optionsTable.key, key));
      const upserts = [...dirtyKeys].map((key) => ({ key, value: work.textOf(key) }));
      if (upserts.length > 0)
        await tx
          .insert(optionsTable)
          .values(upserts)
          .onConflictDoUpdate({ target: optionsTable.key, set: { value: sql`excluded.value` } });
      for (const { remove, upsert } of ownershipWrites) {
        for (const o of remove)
          await tx
            .delete(optionSources)
            .where(and(eq(optionSources.optionKey, o.key), eq(optionSources.entry, o.entry)));
        if (upsert.length > 0)
          await tx
            .insert(optionSources)
            .values(
              upsert.map((o) => ({
                optionKey: o.key,
                entry: o.entry,
                sourceKind: o.kind,
                sourceNamespace: o.namespace,
                sourceName: o.name,
                sourceGeneration: o.generation,
              })),
            )
            .onConflictDoUpdate({
              target: [optionSources.optionKey, optionSources.entry],
              set: { sourceGeneration: sql`excluded.source_generation` },
            });
      }
      return { outcomes, changed: [...dirtyKeys, ...deletedKeys] };
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
