/**
 * Who polls: exactly one relay process at a time holds the task poller's lease. With Redis it is one key
 * (`<prefix>task-poller`); without it, one row of the `leases` table. Either is taken only when absent, expired or
 * already ours, in one step, with an expiry, so a process that died or stalls longer than the lease loses it to
 * another. The lease only saves duplicate work: a refund is safe without it (finish.ts).
 */
import { randomUUID } from 'node:crypto';
import type { Db } from '@turnpike/core/db/client';
import { leases } from '@turnpike/core/db/schema/index';
import { and, eq, lt, or, sql } from 'drizzle-orm';
import type { Redis } from 'ioredis';

export interface PollerLease {
  /** Takes or renews the lease for `ttlMs`; false while another process holds it. */
  acquire(ttlMs: number): Promise<boolean>;
  /** Gives the lease up if we hold it, so another process takes over at once. */
  release(): Promise<void>;
  readonly holder: string;
}

const ACQUIRE = `
local held = redis.call('GET', KEYS[1])
if held == false or held == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0`;

const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

export function createRedisLease(redis: Redis, keyPrefix: string): PollerLease {
  const holder = randomUUID();
  const key = `${keyPrefix}task-poller`;
  return {
    holder,
    async acquire(ttlMs) {
      return (await redis.eval(ACQUIRE, 1, key, holder, Math.max(1, Math.round(ttlMs)))) === 1;
    },
    async release() {
      await redis.eval(RELEASE, 1, key, holder);
    },
  };
}

export const POLLER_LEASE = 'task-poller';

/** The lease as a row of `leases`: an upsert that only overwrites an expired row or one of our own. */
export function createDatabaseLease(db: Db, name = POLLER_LEASE, now: () => number = Date.now): PollerLease {
  const holder = randomUUID();
  return {
    holder,
    async acquire(ttlMs) {
      const at = now();
      const taken = await db
        .insert(leases)
        .values({ name, holder, expiresAt: at + Math.round(ttlMs) })
        .onConflictDoUpdate({
          target: leases.name,
          set: { holder, expiresAt: sql`excluded.expires_at` },
          setWhere: or(eq(leases.holder, holder), lt(leases.expiresAt, at)),
        })
        .returning({ holder: leases.holder });
      return taken.length > 0;
    },
    async release() {
      await db.delete(leases).where(and(eq(leases.name, name), eq(leases.holder, holder)));
    },
  };
}
