import type { Executor } from '../db/client.ts';
import { changedMapEntries, isPriceOptionKey, listOptionOwners } from '../options/managed-options.ts';
import { managedByKubernetes } from './source.ts';

/**
 * Refuses a console change to an option value a Kubernetes resource owns: a whole option a GatewayOption sets,
 * or a price map entry a ModelPrice sets (other entries of the same map stay editable). `next` undefined means
 * a reset to the default. Throws AppError MANAGED_BY_KUBERNETES naming the resource.
 */
export async function refuseManagedOption(
  db: Executor,
  key: string,
  current: string,
  next: string | undefined,
): Promise<void> {
  const owners = await listOptionOwners(db, [key]);
  if (owners.length === 0) return;
  const whole = owners.find((o) => o.entry === '');
  if (whole) throw managedByKubernetes(`option ${key}`, whole);
  if (!isPriceOptionKey(key)) return;
  const touched = next === undefined ? owners.map((o) => o.entry) : changedMapEntries(current, next);
  const owned = owners.find((o) => touched.includes(o.entry));
  if (owned) throw managedByKubernetes(`the ${key} entry of ${owned.entry}`, owned);
}
