/**
 * The reconcile loop every kind shares: decide from the cached resource (decide.ts), keep the finalizer, run
 * the kind's apply or cleanup, then write the status (only when it says something new) and an Event on
 * failure. A kind only says how its resource becomes rows (`apply`) and how its rows go (`cleanup`).
 */
import { isDatabaseUnreachable } from '@turnpike/core/db/unreachable';
import type { SourceRef } from '@turnpike/core/ownership/source';
import type { Logger } from 'pino';
import { type AnyResource, type CommonStatus, FINALIZER, type KindInfo, splitKey } from '../api/v1alpha1.ts';
import type { KubeClient } from '../kube/client.ts';
import { KubeError } from '../kube/client.ts';
import type { EventRecorder } from '../runtime/events.ts';
import type { Informer } from '../runtime/informer.ts';
import type { WorkResult } from '../runtime/work-queue.ts';
import { decide } from './decide.ts';
import type { Refusal } from './outcome.ts';
import {
  type AppliedOutcome,
  appliedConditions,
  buildStatus,
  refusedConditions,
  relaysField,
  type SpecificCondition,
  statusChanged,
} from './status.ts';

export interface KindHandlers<R extends AnyResource> {
  readonly info: KindInfo;
  readonly conditions: readonly SpecificCondition[];
  /** Makes the database match the resource; a refusal writes nothing. */
  apply(resource: R): Promise<AppliedOutcome | Refusal>;
  /** Removes what the resource owns; a refusal keeps the finalizer (and the rows). */
  cleanup(resource: R): Promise<{ ok: true } | Refusal>;
  /**
   * What, besides the resource's generation, its rows depend on (a Channel: its Secret's resourceVersion).
   * A reconcile whose fingerprint matches the last successful one, with the status already saying so, skips
   * the database (the status write's own watch event would otherwise cost a second apply).
   */
  fingerprint?(resource: R): string;
  /** How long to wait before looking again after a refusal (conflicts may resolve themselves). */
  readonly retryRefusedAfterMs?: (refusal: Refusal) => number | undefined;
}

export interface ControllerDeps {
  readonly kube: KubeClient;
  readonly events: EventRecorder;
  readonly logger: Logger;
  readonly now?: () => Date;
  /** Whether relays still have to catch up with a config version published at `since`; polled until they do. */
  readonly relaysPending?: (relays: { applied: number; total: number }) => boolean;
  /** Told when a reconcile failed because the database is unreachable (a metric); it is retried with backoff. */
  readonly onDatabaseUnavailable?: () => void;
}

/** How long status keeps following relay propagation after a change before giving up (a relay may be stuck). */
const FOLLOW_RELAYS_MS = 60_000;
const FOLLOW_RELAYS_EVERY_MS = 250;

export const sourceRefOf = (kind: KindInfo, resource: AnyResource): SourceRef => ({
  kind: kind.kind,
  namespace: resource.metadata.namespace ?? '',
  name: resource.metadata.name,
});

export function createController<R extends AnyResource>(
  handlers: KindHandlers<R>,
  informer: Informer<R>,
  deps: ControllerDeps,
) {
  const { kube, events, logger } = deps;
  const now = deps.now ?? (() => new Date());
  const plural = handlers.info.plural;
  /** key -> when this process last saw relays behind on this key's rows. */
  const following = new Map<string, number>();
  /** key -> fingerprint of the last successful apply (cleared by a resync, so that one goes to the database). */
  const applied = new Map<string, string>();
  const fingerprintOf = (resource: R) =>
    `${resource.metadata.uid}/${resource.metadata.generation ?? 1}/${handlers.fingerprint?.(resource) ?? ''}`;

  /** The object after the change, or undefined when it changed meanwhile (its event re-queues it) or is gone. */
  async function setFinalizers(resource: R, finalizers: string[]): Promise<R | undefined> {
    const { namespace = '', name, resourceVersion } = resource.metadata;
    const had = resource.metadata.finalizers !== undefined;
    try {
      return (await kube.jsonPatch(plural, namespace, name, [
        { op: 'test', path: '/metadata/resourceVersion', value: resourceVersion },
        { op: had ? 'replace' : 'add', path: '/metadata/finalizers', value: finalizers },
      ])) as R;
    } catch (error) {
      // Someone changed the object meanwhile (its event re-queues it), or it is gone: not a failure.
      if (error instanceof KubeError && (error.code === 404 || error.code === 409 || error.code === 422))
        return undefined;
      throw error;
    }
  }

  async function writeStatus(resource: R, status: CommonStatus & Record<string, unknown>): Promise<void> {
    if (!statusChanged(resource.status as (CommonStatus & Record<string, unknown>) | undefined, status))
      return;
    const { namespace = '', name } = resource.metadata;
    try {
      await kube.patchStatus(plural, namespace, name, status);
    } catch (error) {
      if (error instanceof KubeError && error.code === 404) return;
      throw error;
    }
  }

  function warn(resource: R, reason: string, note: string, action: string): void {
    events.record({
      namespace: resource.metadata.namespace ?? '',
      regarding: {
        kind: handlers.info.kind,
        name: resource.metadata.name,
        namespace: resource.metadata.namespace ?? '',
        ...(resource.metadata.uid ? { uid: resource.metadata.uid } : {}),
      },
      type: 'Warning',
      reason,
      note,
      action,
    });
  }

  async function reconcile(key: string): Promise<WorkResult> {
    let resource = informer.get(key);
    const step = decide(resource?.metadata);
    if (!resource || step.step === 'forget' || step.step === 'ignore') {
      following.delete(key);
      applied.delete(key);
      return undefined;
    }
    const generation = resource.metadata.generation ?? 1;
    const previous = resource.status as (CommonStatus & Record<string, unknown>) | undefined;

    if (step.step === 'add-finalizer') {
      // Then straight on to apply with the patched object: one reconcile for a new resource, not two.
      const patched = await setFinalizers(resource, [...(resource.metadata.finalizers ?? []), FINALIZER]);
      if (!patched) return undefined;
      resource = { ...patched, status: resource.status };
    }

    if (
      step.step === 'apply' &&
      !following.has(key) &&
      applied.get(key) === fingerprintOf(resource) &&
      previous?.observedGeneration === generation &&
      previous.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')
    )
      return undefined;

    /**
     * A database failure: reported in the conditions (`DatabaseUnavailable` while the database is unreachable,
     * an outage or a failover; `DatabaseError` otherwise) and an Event, then thrown so the work queue retries
     * the key with backoff.
     */
    const failWith = async (current: R, error: unknown, action: string): Promise<never> => {
      const unreachable = isDatabaseUnreachable(error);
      if (unreachable) deps.onDatabaseUnavailable?.();
      const reason = unreachable ? 'DatabaseUnavailable' : 'DatabaseError';
      const message = unreachable
        ? 'the database is unreachable; retrying with backoff'
        : 'the database write failed; retrying';
      warn(current, reason, message, action);
      await writeStatus(
        current,
        buildStatus(
          previous,
          generation,
          refusedConditions(handlers.conditions, { ok: false, condition: 'Applied', reason, message }),
          now(),
          {},
        ),
      ).catch(() => {});
      throw error;
    };

    if (step.step === 'cleanup') {
      const result = await handlers
        .cleanup(resource)
        .catch((error: unknown) => failWith(resource as R, error, 'Delete'));
      if (!result.ok) {
        warn(resource, result.reason, result.message, 'Delete');
        await writeStatus(
          resource,
          buildStatus(previous, generation, refusedConditions(handlers.conditions, result), now(), {}),
        );
        throw new Error(`cleanup of ${key} refused: ${result.message}`);
      }
      following.delete(key);
      applied.delete(key);
      await setFinalizers(
        resource,
        (resource.metadata.finalizers ?? []).filter((f) => f !== FINALIZER),
      );
      logger.info({ kind: handlers.info.kind, key }, 'resource rows removed');
      return undefined;
    }

    // Taken before the apply: a Secret that changes during it must not be remembered as applied.
    const fingerprint = fingerprintOf(resource);
    let outcome: AppliedOutcome | Refusal;
    try {
      outcome = await handlers.apply(resource);
    } catch (error) {
      return failWith(resource, error, 'Reconcile');
    }

    if (!outcome.ok) {
      applied.delete(key);
      warn(resource, outcome.reason, outcome.message, 'Reconcile');
      await writeStatus(
        resource,
        buildStatus(previous, generation, refusedConditions(handlers.conditions, outcome), now(), {}),
      );
      following.delete(key);
      const retry = handlers.retryRefusedAfterMs?.(outcome);
      return retry === undefined ? undefined : { requeueAfterMs: retry };
    }

    const relays = outcome.relays;
    const message =
      relays.total === 0
        ? ''
        : `${relays.applied} of ${relays.total} relay processes serve generation ${generation}`;
    const status = buildStatus(previous, generation, appliedConditions(handlers.conditions, message), now(), {
      ...outcome.extra,
      configVersion: outcome.configVersion,
      relays: relaysField(relays),
    });
    await writeStatus(resource, status);
    applied.set(key, fingerprint);
    if (relays.applied < relays.total) {
      const since = following.get(key) ?? Date.now();
      following.set(key, since);
      if (Date.now() - since < FOLLOW_RELAYS_MS) return { requeueAfterMs: FOLLOW_RELAYS_EVERY_MS };
    }
    following.delete(key);
    return undefined;
  }

  return {
    reconcile,
    /** The keys of every cached resource, each to be checked against the database again (periodic resync). */
    resyncKeys: () => {
      applied.clear();
      return informer.list().map((r) => `${r.metadata.namespace ?? ''}/${r.metadata.name}`);
    },
    split: splitKey,
  };
}

export type Controller = ReturnType<typeof createController>;
