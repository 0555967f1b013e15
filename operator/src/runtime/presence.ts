/**
 * How many relay processes have applied a config version. Each relay keeps a presence key
 * `<prefix>presence:relay:<processId>` = `{"applied": <version>, "startedAt": <ms>, "at": <ms>}` with a 5 s TTL
 * (issue 15's contract, owned by core's change propagation). Read here with SCAN + MGET: core's
 * `listPresence` helper did not exist when the operator was written; switch to it once it does.
 */
import type { Redis } from 'ioredis';

export interface RelayPresence {
  readonly applied: number;
  readonly startedAt: number;
  readonly at: number;
}

export async function readRelayPresence(redis: Redis, prefix: string): Promise<RelayPresence[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', `${prefix}presence:relay:*`, 'COUNT', 500);
    cursor = next;
    keys.push(...batch);
  } while (cursor !== '0');
  if (keys.length === 0) return [];
  const values = await redis.mget(...keys);
  const out: RelayPresence[] = [];
  for (const value of values) {
    if (!value) continue; // expired between SCAN and MGET
    try {
      const parsed = JSON.parse(value) as Partial<RelayPresence>;
      if (typeof parsed.applied === 'number')
        out.push({ applied: parsed.applied, startedAt: parsed.startedAt ?? 0, at: parsed.at ?? 0 });
    } catch {}
  }
  return out;
}

/** Relays that serve what was published under `version` (0: nothing published, so every relay does). */
export function countApplied(
  relays: readonly RelayPresence[],
  version: number,
): { applied: number; total: number } {
  return { applied: relays.filter((r) => r.applied >= version).length, total: relays.length };
}
