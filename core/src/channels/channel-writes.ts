/**
 * Every channel write of the console API and the operator: rows and their abilities change in one transaction,
 * then `channels.changed` goes out on the bus. Each write answers the config version its event was published
 * under, so a writer can tell which relays have applied it (presence, ADR 0003).
 */
import { and, asc, eq } from 'drizzle-orm';
import type { SealedBox } from '../crypto/sealed-box.ts';
import type { Db, Executor } from '../db/client.ts';
import { type Channel, channels, type NewChannel } from '../db/schema/channels.ts';
import { ChannelStatus } from '../domain/closed-sets.ts';
import type { EventBus } from '../events/bus.ts';
import type { ResourceSource, SourceRef } from '../ownership/source.ts';
import { createAbilityRepo } from '../repos/ability.repo.ts';
import { createChannelRepo } from '../repos/channel.repo.ts';
import { ringStatusPatch } from './key-ring-writes.ts';
import {
  infoOfRing,
  joinKeys,
  type MultiKeyModeValue,
  newRing,
  parseChannelInfo,
  replaceKeys,
  ringOf,
} from './multi-key.ts';

/** The settings of one channel row as a resource wants them; `key` is the plain credential (sealed on write). */
export interface DesiredChannel {
  readonly name: string;
  readonly type: number;
  readonly key: string;
  /**
   * Several keys in one channel (docs/adr/0027): `key` is then ignored. Keys that stay keep their state (an
   * automatically disabled key stays disabled while the Secret lists it).
   */
  readonly multiKey?: { readonly keys: readonly string[]; readonly mode: MultiKeyModeValue };
  readonly baseUrl: string;
  readonly other: string;
  readonly openaiOrganization: string | null;
  readonly testModel: string | null;
  readonly models: string;
  readonly group: string;
  readonly priority: number;
  readonly weight: number;
  readonly tag: string | null;
  readonly status: typeof ChannelStatus.Enabled | typeof ChannelStatus.ManuallyDisabled;
  readonly autoBan: number;
  readonly maxInputTokens: number;
  readonly rpmLimit: number;
  readonly tpmLimit: number;
  readonly concurrencyLimit: number;
  readonly modelMapping: string | null;
  readonly statusCodeMapping: string | null;
  readonly setting: string | null;
  readonly paramOverride: string | null;
}

export interface ChannelWriteResult {
  readonly rows: Channel[];
  /** Config version of the published change; 0 when nothing was published. */
  readonly version: number;
}

export interface ManagedChannelsResult extends ChannelWriteResult {
  /** Whether any row was inserted, updated or deleted. */
  readonly changed: boolean;
  readonly deletedIds: number[];
}

const COMPARED = [
  'name',
  'type',
  'baseUrl',
  'other',
  'openaiOrganization',
  'testModel',
  'models',
  'group',
  'priority',
  'weight',
  'tag',
  'autoBan',
  'maxInputTokens',
  'rpmLimit',
  'tpmLimit',
  'concurrencyLimit',
  'modelMapping',
  'statusCodeMapping',
  'setting',
  'paramOverride',
] as const satisfies readonly (keyof DesiredChannel & keyof Channel)[];

/**
 * The columns to change on `current` so it matches `desired`; empty when it already does. A channel the relay
 * disabled automatically stays disabled while the resource asks for "enabled": that is runtime health, not
 * configuration (ADR 0017); a resource asking for "disabled" always wins.
 */
export function channelPatch(
  current: Channel,
  desired: DesiredChannel,
  openKey: (sealed: string) => string | undefined,
): Partial<NewChannel> {
  const patch: Partial<NewChannel> = {};
  for (const field of COMPARED)
    if (current[field] !== desired[field]) Object.assign(patch, { [field]: desired[field] });
  const keepAutoDisabled =
    current.status === ChannelStatus.AutoDisabled && desired.status === ChannelStatus.Enabled;
  if (current.status !== desired.status && !keepAutoDisabled) patch.status = desired.status;
  const opened = openKey(current.key);
  const info = parseChannelInfo(current.channelInfo);
  if (!desired.multiKey) {
    if (opened !== desired.key || info.is_multi_key) patch.key = desired.key;
    if (info.is_multi_key) patch.channelInfo = null;
    return patch;
  }
  const { keys, mode } = desired.multiKey;
  const ring = opened === undefined ? newRing([], mode) : ringOf(current.type, opened, info);
  const next = { ...replaceKeys(ring, keys), mode };
  const same =
    info.is_multi_key &&
    ring.mode === mode &&
    ring.keys.length === keys.length &&
    ring.keys.every((k, i) => k === keys[i]);
  if (same) return patch;
  patch.key = joinKeys(desired.type, next.keys, true);
  patch.channelInfo = JSON.stringify(infoOfRing(next));
  const status = ringStatusPatch(
    { status: patch.status ?? current.status, otherInfo: current.otherInfo },
    next,
    Math.floor(Date.now() / 1000),
  );
  return { ...patch, ...status };
}

export function createChannelWriter(deps: { db: Db; bus: EventBus; box: SealedBox }) {
  const { db, bus, box } = deps;

  async function publish(ids: number[]): Promise<number> {
    if (ids.length === 0) return 0;
    return bus.publish({ type: 'channels.changed', ids });
  }

  const whereSource = (ref: SourceRef) =>
    and(
      eq(channels.sourceKind, ref.kind),
      eq(channels.sourceNamespace, ref.namespace),
      eq(channels.sourceName, ref.name),
    );

  return {
    /** Runs a write and rebuilds the abilities of the channels it answers, all in one transaction. */
    async write(run: (tx: Executor) => Promise<Channel[]>): Promise<ChannelWriteResult> {
      const rows = await db.transaction(async (tx) => {
        const touched = await run(tx);
        await createAbilityRepo(tx).rebuild(touched);
        return touched;
      });
      return { rows, version: await publish(rows.map((c) => c.id)) };
    },

    /** Deletes the channels `select` answers (inside the transaction) with their abilities. */
    async remove(select: (tx: Executor) => Promise<number[]>): Promise<{ ids: number[]; version: number }> {
      const ids = await db.transaction(async (tx) => {
        const gone = await select(tx);
        await createAbilityRepo(tx).deleteFor(gone);
        return gone;
      });
      return { ids, version: await publish(ids) };
    },

    /** The rows a resource owns, in key order. */
    owned(ref: SourceRef): Promise<Channel[]> {
      return db.select().from(channels).where(whereSource(ref)).orderBy(asc(channels.sourceIndex));
    },

    /**
     * Makes the rows of `source` exactly `desired` (one row per key, matched by position): updates what differs,
     * inserts what is missing, deletes rows beyond the list. Writes and publishes nothing when all match, so a
     * re-sync of an unchanged resource costs one read.
     */
    async applyManaged(
      source: ResourceSource,
      desired: readonly DesiredChannel[],
    ): Promise<ManagedChannelsResult> {
      const { touched, deletedIds, all } = await db.transaction(async (tx) => {
        const repo = createChannelRepo(tx);
        const current = await tx
          .select()
          .from(channels)
          .where(whereSource(source))
          .orderBy(asc(channels.sourceIndex));
        const byIndex = new Map(current.map((row) => [row.sourceIndex ?? -1, row]));
        const changedRows: Channel[] = [];
        const kept: Channel[] = [];
        const inserts: NewChannel[] = [];
        for (const [index, want] of desired.entries()) {
          const row = byIndex.get(index);
          byIndex.delete(index);
          if (!row) {
            const { multiKey, ...columns } = want;
            inserts.push({
              ...columns,
              key: box.seal(multiKey ? joinKeys(want.type, multiKey.keys, true) : want.key),
              channelInfo: multiKey
                ? JSON.stringify(infoOfRing(newRing(multiKey.keys, multiKey.mode)))
                : null,
              createdTime: Math.floor(Date.now() / 1000),
              sourceKind: source.kind,
              sourceNamespace: source.namespace,
              sourceName: source.name,
              sourceGeneration: source.generation,
              sourceIndex: index,
            });
            continue;
          }
          const patch = channelPatch(row, want, (sealed) => box.open(sealed));
          if (Object.keys(patch).length === 0 && row.sourceGeneration === source.generation) {
            kept.push(row);
            continue;
          }
          if (patch.key !== undefined) patch.key = box.seal(patch.key);
          const updated = await repo.update(row.id, { ...patch, sourceGeneration: source.generation });
          if (updated) (Object.keys(patch).length > 0 ? changedRows : kept).push(updated);
        }
        if (inserts.length > 0) changedRows.push(...(await repo.insertMany(inserts)));
        const extra = [...byIndex.values()].map((row) => row.id);
        const gone = await repo.deleteByIds(extra);
        const abilities = createAbilityRepo(tx);
        await abilities.deleteFor(gone);
        await abilities.rebuild(changedRows);
        return { touched: changedRows, deletedIds: gone, all: [...kept, ...changedRows] };
      });
      const ids = [...touched.map((c) => c.id), ...deletedIds];
      const rows = all.sort((a, b) => (a.sourceIndex ?? 0) - (b.sourceIndex ?? 0));
      return { rows, deletedIds, changed: ids.length > 0, version: await publish(ids) };
    },

    /** Deletes every row of a resource (its finalizer runs this); answers the ids that went. */
    async removeManaged(ref: SourceRef): Promise<{ ids: number[]; version: number }> {
      return this.remove(async (tx) => {
        const gone = await tx.delete(channels).where(whereSource(ref)).returning({ id: channels.id });
        return gone.map((g) => g.id);
      });
    },
  };
}

export type ChannelWriter = ReturnType<typeof createChannelWriter>;
