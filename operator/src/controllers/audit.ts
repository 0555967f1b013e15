/**
 * The operator's changes in the audit log (docs/adr/0045): the channel and option writers wrapped so each change a
 * custom resource makes is written with its audit row, actor `operator`, in one transaction (core/src/audit). A
 * re-sync that changes nothing leaves no row. The config version a write answers (the relays' presence counts it)
 * is the one its events went out under once the transaction ended.
 */
import { type AuditActor, type AuditDeps, audited } from '@turnpike/core/audit/audited';
import { channelState, storedOptionState } from '@turnpike/core/audit/states';
import type { ChannelWriter } from '@turnpike/core/channels/channel-writes';
import { channels } from '@turnpike/core/db/schema/channels';
import { optionSources } from '@turnpike/core/db/schema/option-sources';
import { AuditActorType, AuditKind } from '@turnpike/core/domain/closed-sets';
import type { ManagedOptionsOutcome, ManagedOptionWriter } from '@turnpike/core/options/managed-options';
import { describeSource, type SourceRef } from '@turnpike/core/ownership/source';
import { and, eq, inArray } from 'drizzle-orm';

const OPERATOR: AuditActor = { type: AuditActorType.Operator, id: 0, name: 'operator' };

async function ownedChannelIds(deps: AuditDeps, ref: SourceRef): Promise<string[]> {
  const rows = await deps.db
    .select({ id: channels.id })
    .from(channels)
    .where(
      and(
        eq(channels.sourceKind, ref.kind),
        eq(channels.sourceNamespace, ref.namespace),
        eq(channels.sourceName, ref.name),
      ),
    );
  return rows.map((row) => String(row.id));
}

/** A result with the version its held events went out under (0 inside the transaction). */
async function withVersion<R extends { version: number }>(
  run: (published: (v: number) => void) => Promise<R>,
) {
  let version = 0;
  const result = await run((v) => {
    version = v;
  });
  return result.version === 0 && version > 0 ? { ...result, version } : result;
}

/** `deps`: the database and bus that follow the ambient transaction (core/src/db/ambient.ts). */
export function auditChannelWrites(writer: ChannelWriter, deps: AuditDeps): ChannelWriter {
  const load = channelState(deps.db);
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
            targets: () => ownedChannelIds(deps, source),
            targetsOf: (result) => result.rows.map((row) => String(row.id)),
            load,
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
            targets: () => ownedChannelIds(deps, ref),
            load,
            unchanged: (result) => result.ids.length === 0,
          },
          () => writer.removeManaged(ref),
          published,
        ),
      ),
  };
}

/** Keys the batch's requests name or their resources own now (one read): their state is read before and after. */
async function keysOf(deps: AuditDeps, requests: Parameters<ManagedOptionWriter['applyBatch']>[0]) {
  const keys = new Set(requests.flatMap((r) => (r.values ?? []).map((v) => v.key)));
  const sources = new Set(requests.map((r) => describeSource(r.source)));
  const owned = await deps.db
    .selectDistinct({
      key: optionSources.optionKey,
      kind: optionSources.sourceKind,
      namespace: optionSources.sourceNamespace,
      name: optionSources.sourceName,
    })
    .from(optionSources)
    .where(inArray(optionSources.sourceName, [...new Set(requests.map((r) => r.source.name))]));
  for (const row of owned) if (sources.has(describeSource(row as SourceRef))) keys.add(row.key);
  return [...keys];
}

export function auditOptionWrites(writer: ManagedOptionWriter, deps: AuditDeps): ManagedOptionWriter {
  const load = storedOptionState(deps.db);
  const changedKeys = (outcomes: ManagedOptionsOutcome[]) => [
    ...new Set(outcomes.flatMap((o) => (o.ok ? o.changedKeys : []))),
  ];
  async function applyBatch(requests: Parameters<ManagedOptionWriter['applyBatch']>[0]) {
    let version = 0;
    const outcomes = await audited(
      deps,
      OPERATOR,
      { source: requests.map((r) => describeSource(r.source)).join(', ') },
      {
        kind: AuditKind.Option,
        action: 'apply resources',
        targets: () => keysOf(deps, requests),
        targetsOf: changedKeys,
        load,
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
