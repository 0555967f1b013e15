/**
 * Which processes are running and which config version each has applied (docs/adr/0016). Every relay (and api)
 * process keeps `<prefix>presence:<role>:<process id>` = `{"applied": <config version>, "startedAt": <ms>,
 * "at": <ms>}` with a short expiry, renewed every second and at once when it applies a change, so a writer (the
 * console API, the operator) can tell how many running processes already serve its change: `status.relays` of
 * the custom resources, and the propagation figures of the cluster tests.
 */
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { EventBus } from '../events/bus.ts';

export interface Presence {
  readonly processId: string;
  readonly role: string;
  readonly applied: number;
  readonly startedAt: number;
  readonly at: number;
}

const TTL_MS = 5_000;
const RENEW_MS = 1_000;

const keyOf = (prefix: string, role: string, processId: string) => `${prefix}presence:${role}:${processId}`;

/** Announces this process until the returned stop is called (which removes the key). */
export function startPresence(options: {
  readonly redis: Redis;
  readonly keyPrefix: string;
  readonly role: string;
  readonly bus: EventBus;
  readonly processId?: string;
}): { readonly processId: string; stop(): Promise<void> } {
  const processId = options.processId ?? randomBytes(6).toString('hex');
  const key = keyOf(options.keyPrefix, options.role, processId);
  const startedAt = Date.now();
  const write = () => {
    const value = JSON.stringify({ applied: options.bus.appliedVersion(), startedAt, at: Date.now() });
    options.redis.set(key, value, 'PX', TTL_MS).catch(() => undefined);
  };
  write();
  const timer = setInterval(write, RENEW_MS);
  timer.unref();
  const unsubscribe = options.bus.onApplied(write);
  return {
    processId,
    async stop() {
      clearInterval(timer);
      unsubscribe();
      await options.redis.del(key).catch(() => undefined);
    },
  };
}

/** The live processes of a role, read with SCAN and MGET (keys expire with their process). */
export async function listPresence(redis: Redis, keyPrefix: string, role: string): Promise<Presence[]> {
  const pattern = keyOf(keyPrefix, role, '*');
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
    cursor = next;
    keys.push(...batch);
  } while (cursor !== '0');
  if (keys.length === 0) return [];
  const values = await redis.mget(...keys);
  const found: Presence[] = [];
  values.forEach((value, i) => {
    if (!value) return;
    try {
      const parsed = JSON.parse(value) as { applied?: number; startedAt?: number; at?: number };
      found.push({
        processId: (keys[i] as string).slice(pattern.length - 1),
        role,
        applied: Number(parsed.applied ?? 0),
        startedAt: Number(parsed.startedAt ?? 0),
        at: Number(parsed.at ?? 0),
      });
    } catch {
      // A value this version cannot read counts as absent.
    }
  });
  return found;
}
