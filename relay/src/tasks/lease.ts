/**
 * Who polls: exactly one relay process at a time holds the task poller's lease. With Redis it is one key
 * (`<prefix>task-poller`) set only when absent or already ours, with an expiry, so a process that died or stalls
 * longer than the lease loses it to another; without Redis there is one process (README: several processes need
 * Redis), and it always holds it. The lease only saves duplicate work: a refund is safe without it (finish.ts).
 */
import { randomUUID } from 'node:crypto';
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

/** One process, no shared store: this process is the only poller. */
export function createLocalLease(): PollerLease {
  return { holder: 'local', acquire: async () => true, release: async () => undefined };
}
