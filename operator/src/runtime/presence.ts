/**
 * How many relay processes have applied a config version, from the presence keys every relay keeps
 * (`<prefix>presence:relay:<process id>`, core/src/cluster/presence.ts, docs/adr/0016).
 */
import { listPresence, type Presence } from '@turnpike/core/cluster/presence';
import type { Redis } from 'ioredis';

export type RelayPresence = Pick<Presence, 'applied' | 'startedAt' | 'at'>;

export function readRelayPresence(redis: Redis, prefix: string): Promise<RelayPresence[]> {
  return listPresence(redis, prefix, 'relay');
}

/** Relays that serve what was published under `version` (0: nothing published, so every relay does). */
export function countApplied(
  relays: readonly RelayPresence[],
  version: number,
): { applied: number; total: number } {
  return { applied: relays.filter((r) => r.applied >= version).length, total: relays.length };
}
