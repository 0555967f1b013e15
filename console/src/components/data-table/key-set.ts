import { useState } from 'react';

/**
 * A set of row keys a list page keeps (rows picked, rows busy, rows opened), with the changes it makes to it; each
 * change makes a new set, so React sees it.
 */
export function useKeySet<K>() {
  const [keys, setKeys] = useState<ReadonlySet<K>>(() => new Set());
  /** Adds (`on`) or removes each key of `changed`. */
  const set = (changed: K | readonly K[], on: boolean) =>
    setKeys((current) => {
      const next = new Set(current);
      for (const key of Array.isArray(changed) ? (changed as readonly K[]) : [changed as K]) {
        if (on) next.add(key);
        else next.delete(key);
      }
      return next;
    });
  return {
    keys,
    has: (key: K) => keys.has(key),
    set,
    toggle: (key: K) => set(key, !keys.has(key)),
    clear: () => setKeys(new Set()),
  };
}
