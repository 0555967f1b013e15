/**
 * The status a reconcile writes, from its outcome. Pure: conditions with the transition rule, observed
 * generation, the rows' config version and relay propagation. Key material never appears here.
 */
import type { CommonStatus, Condition } from '../api/v1alpha1.ts';
import { type ConditionInput, sameConditions, setConditions } from '../runtime/conditions.ts';
import { relaysSummary } from './decide.ts';
import type { Refusal } from './outcome.ts';

/** The conditions a kind reports besides `Ready`, in order. */
export type SpecificCondition = 'KeyResolved' | 'Valid' | 'Applied';

export interface AppliedOutcome {
  readonly ok: true;
  /** Config version the rows were (last) published under. */
  readonly configVersion: number;
  readonly relays: { applied: number; total: number };
  /** Kind-specific status fields (channelIDs, optionEntries, ...). */
  readonly extra: Record<string, unknown>;
}

/** Conditions for an applied resource: everything True. */
export function appliedConditions(specific: readonly SpecificCondition[], message: string): ConditionInput[] {
  return [
    { type: 'Ready', status: 'True', reason: 'Applied', message },
    ...specific.map((type) => ({
      type,
      status: 'True' as const,
      reason: type === 'KeyResolved' ? 'SecretResolved' : type,
      message: '',
    })),
  ];
}

/**
 * Conditions for a refused resource: `Ready` False with the refusal's reason, the failing condition False,
 * conditions checked before it True and those after it Unknown (never evaluated).
 */
export function refusedConditions(
  specific: readonly SpecificCondition[],
  refusal: Refusal,
): ConditionInput[] {
  const failedAt = specific.indexOf(refusal.condition);
  return [
    { type: 'Ready', status: 'False', reason: refusal.reason, message: refusal.message },
    ...specific.map((type, i): ConditionInput => {
      if (type === refusal.condition)
        return { type, status: 'False', reason: refusal.reason, message: refusal.message };
      if (failedAt >= 0 && i < failedAt) return { type, status: 'True', reason: type, message: '' };
      return { type, status: 'Unknown', reason: 'NotChecked', message: '' };
    }),
  ];
}

export function buildStatus(
  previous: (CommonStatus & Record<string, unknown>) | undefined,
  generation: number,
  conditions: readonly ConditionInput[],
  now: Date,
  fields: Record<string, unknown>,
): CommonStatus & Record<string, unknown> {
  return {
    ...(previous ?? {}),
    ...fields,
    observedGeneration: generation,
    conditions: setConditions(previous?.conditions, conditions, generation, now),
  };
}

/** Whether writing `next` would change what `previous` says (condition times aside). */
export function statusChanged(
  previous: (CommonStatus & Record<string, unknown>) | undefined,
  next: CommonStatus & Record<string, unknown>,
): boolean {
  if (!previous) return true;
  const strip = (s: CommonStatus & Record<string, unknown>) =>
    JSON.stringify({ ...s, conditions: undefined });
  return (
    strip(previous) !== strip(next) || !sameConditions(previous.conditions as Condition[], next.conditions)
  );
}

export function relaysField(relays: { applied: number; total: number }) {
  return {
    applied: relays.applied,
    total: relays.total,
    summary: relaysSummary(relays.applied, relays.total),
  };
}
