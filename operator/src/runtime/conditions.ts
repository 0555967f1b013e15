/**
 * Status conditions (metav1.Condition) with Kubernetes' transition rule: `lastTransitionTime` changes only when
 * a condition's status flips. Conditions are a map keyed by type; the operator owns the whole list. Pure.
 */
import type { Condition } from '../api/v1alpha1.ts';

export type ConditionInput = Omit<Condition, 'lastTransitionTime' | 'observedGeneration'>;

export function setConditions(
  previous: readonly Condition[] | undefined,
  next: readonly ConditionInput[],
  generation: number,
  now: Date,
): Condition[] {
  const before = new Map((previous ?? []).map((c) => [c.type, c]));
  const out: Condition[] = [];
  for (const condition of next) {
    const old = before.get(condition.type);
    out.push({
      ...condition,
      lastTransitionTime:
        old && old.status === condition.status
          ? old.lastTransitionTime
          : now.toISOString().replace(/\.\d+Z$/, 'Z'),
      observedGeneration: generation,
    });
  }
  return out;
}

/** Whether two condition lists say the same thing (times aside), so a status write can be skipped. */
export function sameConditions(
  a: readonly Condition[] | undefined,
  b: readonly Condition[] | undefined,
): boolean {
  const key = (list: readonly Condition[] | undefined) =>
    JSON.stringify(
      (list ?? [])
        .map((c) => [c.type, c.status, c.reason, c.message, c.observedGeneration])
        .sort((x, y) => String(x[0]).localeCompare(String(y[0]))),
    );
  return key(a) === key(b);
}

export const findCondition = (list: readonly Condition[] | undefined, type: string): Condition | undefined =>
  list?.find((c) => c.type === type);
