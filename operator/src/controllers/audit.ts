/**
 * The operator's changes in the audit log (docs/adr/0045): the channel and option writers wrapped so each change a
 * custom resource makes is written with its audit row, actor `operator`, in one transaction (core/src/audit). A
 * re-sync that changes nothing leaves no row. The config version a write answers (the relays' presence counts it)
 * is the one its events went out under once the transaction ended. The audit reads what the change touches in as
 * few reads as it can (a cold start applies thousands of resources): a resource's channels in one read before, the
 * writer's own answer after; a batch's prices only for the entries the batch names or its resources own.
 */
import { type AuditActor, type AuditDeps, audited } from '@turnpike/core/audit/audited';
import { channelStateOf, type OptionScope, ownedOptionStates } from '@turnpike/core/audit/states';
import type { ChannelWriter } from '@turnpike/core/channels/channel-writes';
import { type Channel, channels } from '@turnpike/core/db/schema/channels';
import { optionSources } from '@turnpike/core/db/schema/option-sources';
import { AuditActorType, AuditKind } from '@turnpike/core/domain/closed-sets';
import type {
  ManagedOptionsOutcome,
  ManagedOptionsRequest,
  ManagedOptionWriter,
} from '@turnpike/core/options/managed-options';
import { describeSource, type SourceRef } from '@turnpike/core/ownership/source';
import { and, eq, inArray } from 'drizzle-orm';

const OPERATOR: AuditActor = { type: AuditActorType.Operator, id: 0, name: 'operator' };

const statesOf = (rows: readonly Channel[]) =>
  new Map<string, unknown>(rows.map((row) => [String(row.id), channelStateOf(row)]));

/** The channels a resource owns, with their states: one read. */
async function ownedChannels(deps: AuditDeps, ref: SourceRef): Promise<Map<string, unknown>> {
  const rows = await deps.db
    .select()
    .from(channels)
    .where(
      and(
        eq(channels.sourceKind, ref.kind),
        eq(channels.sourceNamespace, ref.namespace),
        eq(channels.sourceName, ref.name),
      ),
    );
  return statesOf(rows);
}

/** A result with the version its held events went out under (0 inside the transaction). */
async function withVersion<R extends { version: number }>(
  run: (published: (v: number) => void) => Promise<R>,
): Promise<R> {
  let version = 0;
  const result = await run((v) => {
    version = v;
  });
  return result.version === 0 && version > 0 ? { ...result, version } : result;
}

/** `deps`: the database and bus that follow the ambient transaction (core/src/db/ambient.ts). */
export function auditChannelWrites(writer: ChannelWriter, deps: AuditDeps): ChannelWriter {
  return {
    ...writer,
    applyManaged: (source, desired) =>
      withVersion((published) =>
        audited(
          deps,
          OPERATOR,
          { source: describeSource(source) },
          {
            kind: AuditKind.Channel,
            action: 'apply resource',
            snapshot: () => ownedChannels(deps, source),
            targetsOf: (result) => [
              ...result.rows.map((row) => String(row.id)),
              ...result.deletedIds.map(String),
            ],
            // The writer answers every row the resource owns now; a deleted one is absent.
            statesAfter: (result) => statesOf(result.rows),
            unchanged: (result) => !result.changed,
          },
          () => writer.applyManaged(source, desired),
          published,
        ),
      ),
    removeManaged: (ref) =>
      withVersion((published) =>
        audited(
          deps,
          OPERATOR,
          { source: describeSource(ref) },
          {
            kind: AuditKind.Channel,
            action: 'remove resource',
            snapshot: () => ownedChannels(deps, ref),
            statesAfter: () => new Map(),
            unchanged: (result) => result.ids.length === 0,
          },
          () => writer.removeManaged(ref),
          published,
        ),
      ),
  };
}

/** What a batch touches: the entries its requests name and those its resources own now (one read). */
async function scopeOf(deps: AuditDeps, requests: readonly ManagedOptionsRequest[]): Promise<OptionScope> {
  const scope = new Map<string, Set<string>>();
  const add = (key: string, entry: string) => {
    const entries = scope.get(key) ?? new Set<string>();
    entries.add(entry);
    scope.set(key, entries);
  };
  for (const request of requests) for (const value of request.values ?? []) add(value.key, value.entry);
  const sources = new Set(requests.map((r) => describeSource(r.source)));
  const owned = await deps.db
    .select({
      key: optionSources.optionKey,
      entry: optionSources.entry,
      kind: optionSources.sourceKind,
      namespace: optionSources.sourceNamespace,
      name: optionSources.sourceName,
    })
    .from(optionSources)
    .where(inArray(optionSources.sourceName, [...new Set(requests.map((r) => r.source.name))]));
  for (const row of owned) if (sources.has(describeSource(row as SourceRef))) add(row.key, row.entry);
  return scope;
}

export function auditOptionWrites(writer: ManagedOptionWriter, deps: AuditDeps): ManagedOptionWriter {
  const changedKeys = (outcomes: ManagedOptionsOutcome[]) => [
    ...new Set(outcomes.flatMap((o) => (o.ok ? o.changedKeys : []))),
  ];
  async function applyBatch(requests: readonly ManagedOptionsRequest[]) {
    let version = 0;
    let scope: OptionScope = new Map();
    const outcomes = await audited(
      deps,
      OPERATOR,
      { source: requests.map((r) => describeSource(r.source)).join(', ') },
      {
        kind: AuditKind.Option,
        action: 'apply resources',
        snapshot: async () => {
          scope = await scopeOf(deps, requests);
          return ownedOptionStates(deps.db, scope, [...scope.keys()]);
        },
        targetsOf: changedKeys,
        loadMany: (keys) => ownedOptionStates(deps.db, scope, keys),
        unchanged: (result) => changedKeys(result).length === 0,
      },
      () => writer.applyBatch(requests),
      (v) => {
        version = v;
      },
    );
    return outcomes.map((o) => (o.ok && o.changedKeys.length > 0 && o.version === 0 ? { ...o, version } : o));
  }
  return {
    ...writer,
    applyBatch,
    async apply(request) {
      const [outcome] = await applyBatch([request]);
      return outcome as ManagedOptionsOutcome;
    },
  };
}
