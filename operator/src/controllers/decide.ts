/**
 * What one reconcile does with a resource, decided from the resource alone (level-triggered: the event that
 * woke it does not matter). Pure; the controllers carry it out.
 */
import { FINALIZER, type ObjectMeta } from '../api/v1alpha1.ts';

export type Step =
  /** Gone from the API server: nothing left to do (its finalizer already ran). */
  | { readonly step: 'forget' }
  /** Being deleted and still ours: remove its rows, then the finalizer. */
  | { readonly step: 'cleanup' }
  /** Being deleted, finalizer already gone (or never added): wait for the API server to drop it. */
  | { readonly step: 'ignore' }
  /** New to us: add the finalizer first (its write wakes the next reconcile). */
  | { readonly step: 'add-finalizer' }
  /** Make the database match the spec and report status. */
  | { readonly step: 'apply' };

export function decide(meta: ObjectMeta | undefined): Step {
  if (!meta) return { step: 'forget' };
  const ours = meta.finalizers?.includes(FINALIZER) ?? false;
  if (meta.deletionTimestamp) return ours ? { step: 'cleanup' } : { step: 'ignore' };
  if (!ours) return { step: 'add-finalizer' };
  return { step: 'apply' };
}

/** Relay propagation as the status shows it: `2/3`, or `-` when no relay reports presence. */
export function relaysSummary(applied: number, total: number): string {
  return total === 0 ? '-' : `${applied}/${total}`;
}
