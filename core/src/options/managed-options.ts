/**
 * Option values owned by Kubernetes resources (docs/adr/0017): a GatewayOption owns whole options, a ModelPrice
 * owns one model's entry in the price maps (ModelRatio, CompletionRatio, CacheRatio, ModelPrice). Values are
 * checked by the option registry and its cross-option rules, exactly as `PUT /api/option/` checks them, then
 * stored with their owner in one transaction and announced with `options.changed`.
 *
 * Many resources are applied in one batch (one transaction, one event): a cold start of thousands of prices
 * must not rewrite the price maps once per resource. Each resource still succeeds or fails on its own.
 */
import { and, eq, inArray, sql } from 'drizzle-orm';
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

export function createManagedOptionWriter(deps: { db: Db; bus: EventBus }) {
  const { db, bus } = deps;

  /**
   * Applies several resources' wanted values. Per resource: refused (nothing of it written) when another
   * resource owns one of its values or the registry rejects the result; otherwise its values and ownership rows
   * are written. Answers one outcome per request, in order.
   */
  async function applyBatch(requests: readonly ManagedOptionsRequest[]): Promise<ManagedOptionsOutcome[]> {
    const result = await db.transaction(async (tx) => {
      await tx.execute(sql`select pg_advisory_xact_lock(${LOCK_ID})`);
      const rows = await tx.select().from(optionsTable);
      const work = createWorkingSet(rows);
      const owners = new Map((await listOptionOwners(tx)).map((o) => [ownerKey(o.key, o.entry), o]));
      const dirtyKeys = new Set<OptionKey>();
      const deletedKeys = new Set<OptionKey>();
      const outcomes: ({ ok: true; keys: Set<string> } | Extract<ManagedOptionsOutcome, { ok: false }>)[] =
        [];
      const ownershipWrites: { remove: OptionOwner[]; upsert: OptionOwner[] }[] = [];

      for (const { source, values } of requests) {
        const mine = [...owners.values()].filter((o) => sameSource(o, source));
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

        // The new text of every option this resource touches.
        const next = new Map<OptionKey, string | undefined>();
        const maps = new Map<OptionKey, Record<string, number>>();
        const mapOf = (key: OptionKey) => {
          let map = maps.get(key);
          if (!map) {
            map = { ...(work.read(key) as Record<string, number>) };
            maps.set(key, map);
          }
          return map;
        };
        for (const o of released) {
          if (!isOptionKey(o.key)) continue;
          if (o.entry) delete mapOf(o.key)[o.entry];
          else next.set(o.key, undefined); // a released whole option goes back to its default
        }
        for (const v of wanted) {
          const key = v.key as OptionKey;
          if (v.entry) mapOf(key)[v.entry] = (v as { number: number }).number;
          else next.set(key, (v as { text: string }).text);
        }
        for (const [key, map] of maps) next.set(key, JSON.stringify(map));

        const check = validateOptions(
          [...next].map(([key, text]) => [key, text ?? defaultOptionText(key)] as const),
          work.read,
        );
        if (!check.ok) {
          outcomes.push({ ok: false, reason: 'InvalidOption', message: check.message });
          ownershipWrites.push({ remove: [], upsert: [] });
          continue;
        }
        const changed = new Set<string>();
        for (const option of check.options) {
          const removing = next.get(option.key) === undefined;
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
        for (const o of released) owners.delete(ownerKey(o.key, o.entry));
        const upsert = wanted.map((v) => ({ ...source, key: v.key, entry: v.entry }));
        for (const o of upsert) owners.set(ownerKey(o.key, o.entry), o);
        ownershipWrites.push({ remove: released, upsert });
        outcomes.push({ ok: true, keys: changed });
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
