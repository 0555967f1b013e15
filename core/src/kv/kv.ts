import type { Redis } from 'ioredis';

/**
 * Small shared key/value store with expiry for short-lived values (verification codes, notification limits).
 * Redis when configured, so every replica sees the same values; otherwise a bounded in-process map.
 */
export interface KvStore {
  get(key: string): Promise<string | undefined>;
  set(key: string, value: string, ttlSeconds: number): Promise<void>;
  /** Reads and deletes in one step, so a one-time value can be used once even under concurrent requests. */
  take(key: string): Promise<string | undefined>;
  del(key: string): Promise<void>;
  /** Increments a counter that expires `ttlSeconds` after its first increment; returns the new value. */
  incr(key: string, ttlSeconds: number): Promise<number>;
}

export function createRedisKv(redis: Redis, keyPrefix = 'turnpike:'): KvStore {
  const PREFIX = `${keyPrefix}kv:`;
  return {
    async get(key) {
      return (await redis.get(PREFIX + key)) ?? undefined;
    },
    async set(key, value, ttlSeconds) {
      await redis.set(PREFIX + key, value, 'EX', ttlSeconds);
    },
    async take(key) {
      return (await redis.getdel(PREFIX + key)) ?? undefined;
    },
    async del(key) {
      await redis.del(PREFIX + key);
    },
    async incr(key, ttlSeconds) {
      const [[, count]] = (await redis
        .multi()
        .incr(PREFIX + key)
        .expire(PREFIX + key, ttlSeconds, 'NX')
        .exec()) as [[unknown, number]];
      return count;
    },
  };
}

/** At most `maxEntries` live values; the oldest are dropped first, so memory stays bounded under abuse. */
export function createMemoryKv(maxEntries = 100_000, now: () => number = Date.now): KvStore {
  const entries = new Map<string, { value: string; expiresAt: number }>();
  const read = (key: string) => {
    const entry = entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= now()) {
      entries.delete(key);
      return undefined;
    }
    return entry;
  };
  const write = (key: string, value: string, expiresAt: number) => {
    entries.delete(key);
    entries.set(key, { value, expiresAt });
    if (entries.size > maxEntries) entries.delete(entries.keys().next().value as string);
  };
  return {
    async get(key) {
      return read(key)?.value;
    },
    async set(key, value, ttlSeconds) {
      write(key, value, now() + ttlSeconds * 1000);
    },
    async take(key) {
      const value = read(key)?.value;
      entries.delete(key);
      return value;
    },
    async del(key) {
      entries.delete(key);
    },
    async incr(key, ttlSeconds) {
      const entry = read(key);
      const count = Number(entry?.value ?? 0) + 1;
      write(key, String(count), entry?.expiresAt ?? now() + ttlSeconds * 1000);
      return count;
    },
  };
}
