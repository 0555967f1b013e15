/**
 * The limit counters in Redis, shared by every relay process on it (docs/adr/0028): one Lua script per admission
 * checks every counter that applies and adds to all of them only when each has room, timed by the Redis clock (relay
 * pods with skewed clocks agree). Rate counters are hashes of bucket → amount; slot counters are sorted sets of
 * lease → expiry. Every key carries the same hash tag, so one script may touch them all on a Redis Cluster too.
 */
import { scriptRunner } from '@turnpike/core/kv/redis-script';
import type { Redis } from 'ioredis';
import { bucketMsOf, type CounterResult, type CounterStore } from './counters.ts';

// KEYS: rate counters, then slot counters. ARGV: number of rate counters, window ms, bucket ms, lease ms, member,
// then limit and amount of each rate counter, then the limit of each slot counter.
// Returns {1, bucket, 0, 0, used, held} when admitted, else {0, 1 (rate) | 2 (slot), index (1-based), wait ms,
// used, held}: what each counter held before the request.
const ADMIT_SCRIPT = `
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local nRates = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local bucketMs = tonumber(ARGV[3])
local lease = tonumber(ARGV[4])
local member = ARGV[5]
local bucket = string.format('%d', math.floor(now / bucketMs))
local first = math.floor((now - window) / bucketMs)
local used = {}
local held = {}
local refusedType = 0
local refusedIndex = 0
local wait = 0
for i = 1, nRates do
  local key = KEYS[i]
  local limit = tonumber(ARGV[4 + i * 2])
  local amount = tonumber(ARGV[5 + i * 2])
  local flat = redis.call('HGETALL', key)
  local buckets = {}
  local sum = 0
  for j = 1, #flat, 2 do
    local b = tonumber(flat[j])
    if b < first then
      redis.call('HDEL', key, flat[j])
    else
      local v = tonumber(flat[j + 1])
      sum = sum + v
      buckets[#buckets + 1] = {b, v}
    end
  end
  used[i] = sum
  if refusedType == 0 and sum + amount > limit then
    refusedType = 1
    refusedIndex = i
    wait = window
    if amount <= limit then
      table.sort(buckets, function(a, b) return a[1] < b[1] end)
      local left = sum
      for _, entry in ipairs(buckets) do
        left = left - entry[2]
        if left + amount <= limit then
          wait = math.max(1, (entry[1] + 1) * bucketMs + window - now)
          break
        end
      end
    end
  end
end
local nSlots = #KEYS - nRates
local slotBase = 5 + nRates * 2
for i = 1, nSlots do
  local key = KEYS[nRates + i]
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
  local count = redis.call('ZCARD', key)
  held[i] = count
  if refusedType == 0 and count >= tonumber(ARGV[slotBase + i]) then
    refusedType = 2
    refusedIndex = i
    wait = 1000
  end
end
if refusedType ~= 0 then return {0, refusedType, refusedIndex, wait, used, held} end
for i = 1, nRates do
  local amount = tonumber(ARGV[5 + i * 2])
  if amount > 0 then redis.call('HINCRBY', KEYS[i], bucket, amount) end
  redis.call('PEXPIRE', KEYS[i], window + 2 * bucketMs)
end
for i = 1, nSlots do
  redis.call('ZADD', KEYS[nRates + i], now + lease, member)
  redis.call('PEXPIRE', KEYS[nRates + i], lease * 2)
end
return {1, tonumber(bucket), 0, 0, used, held}
`;

// KEYS: rate counters. ARGV: admission bucket, window ms, bucket ms, then the delta of each counter.
const CORRECT_SCRIPT = `
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local bucket = ARGV[1]
local window = tonumber(ARGV[2])
local bucketMs = tonumber(ARGV[3])
local first = math.floor((now - window) / bucketMs)
for i = 1, #KEYS do
  local delta = tonumber(ARGV[3 + i])
  if delta ~= 0 then
    if tonumber(bucket) >= first and redis.call('HEXISTS', KEYS[i], bucket) == 1 then
      if redis.call('HINCRBY', KEYS[i], bucket, delta) < 0 then redis.call('HSET', KEYS[i], bucket, 0) end
    elseif delta > 0 then
      redis.call('HINCRBY', KEYS[i], string.format('%d', math.floor(now / bucketMs)), delta)
      redis.call('PEXPIRE', KEYS[i], window + 2 * bucketMs)
    end
  end
end
return 0
`;

// KEYS: slot counters. ARGV: member, lease ms. Only a lease still held is extended.
const RENEW_SCRIPT = `
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local lease = tonumber(ARGV[2])
for i = 1, #KEYS do
  if redis.call('ZADD', KEYS[i], 'XX', 'CH', now + lease, ARGV[1]) > 0 then
    redis.call('PEXPIRE', KEYS[i], lease * 2)
  end
end
return 0
`;

/** The counters in Redis, under `<prefix>limits:{limits}:<counter>`; every key expires with its window or lease. */
export function createRedisCounterStore(redis: Redis, keyPrefix: string): CounterStore {
  const admitScript = scriptRunner(redis, ADMIT_SCRIPT);
  const correctScript = scriptRunner(redis, CORRECT_SCRIPT);
  const renewScript = scriptRunner(redis, RENEW_SCRIPT);
  const keyOf = (key: string) => `${keyPrefix}limits:{limits}:${key}`;
  // A connection known to be down fails at once instead of queueing the request behind reconnects.
  const ensureUp = () => {
    if (redis.status === 'reconnecting' || redis.status === 'close' || redis.status === 'end')
      throw new Error(`redis is ${redis.status}`);
  };

  return {
    async admit(request): Promise<CounterResult> {
      ensureUp();
      const keys = [...request.rates.map((c) => keyOf(c.key)), ...request.slots.map((c) => keyOf(c.key))];
      const args: (string | number)[] = [
        request.rates.length,
        request.windowMs,
        bucketMsOf(request.windowMs),
        request.leaseMs,
        request.member,
      ];
      for (const check of request.rates) args.push(check.limit, Math.max(0, Math.ceil(check.amount)));
      for (const check of request.slots) args.push(check.limit);
      const [ok, second, index, wait, used, held] = (await admitScript(keys, args)) as [
        number,
        number,
        number,
        number,
        number[],
        number[],
      ];
      const levels = { rateUsed: used.map(Number), slotsHeld: held.map(Number) };
      if (ok === 1) return { ok: true, bucket: Number(second), ...levels };
      return {
        ok: false,
        refused: { type: second === 1 ? 'rate' : 'slot', index: Number(index) - 1 },
        retryAfterMs: Number(wait),
        ...levels,
      };
    },
    async correct(keys, bucket, deltas, windowMs) {
      if (keys.length === 0) return;
      ensureUp();
      await correctScript(keys.map(keyOf), [
        String(bucket),
        windowMs,
        bucketMsOf(windowMs),
        ...deltas.map((d) => Math.trunc(d)),
      ]);
    },
    async release(keys, member) {
      if (keys.length === 0) return;
      ensureUp();
      const pipeline = redis.pipeline();
      for (const key of keys) pipeline.zrem(keyOf(key), member);
      await pipeline.exec();
    },
    async renew(keys, member, leaseMs) {
      if (keys.length === 0) return;
      ensureUp();
      await renewScript(keys.map(keyOf), [member, leaseMs]);
    },
  };
}
