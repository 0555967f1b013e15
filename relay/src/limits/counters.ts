/**
 * The counters behind the relay's limits (docs/adr/0028): rate counters (requests or tokens over a sliding window)
 * and slot counters (requests in flight, each a lease). One admission checks every counter that applies and, only
 * when all of them have room, adds to all of them: all or nothing, so two requests can never both take the last
 * unit of any counter. This file is the store of one process; `redis-counters.ts` is the same in one Lua script.
 *
 * A rate counter is a window cut into 60 buckets. The sum counted at admission covers every bucket that overlaps
 * the window (the oldest one whole), so it is never less than what any window of that length really holds: the
 * total admitted over a window cannot exceed the limit, at the price of refusing up to one bucket early.
 */

/** A counter of amounts over the sliding window. */
export interface RateCheck {
  readonly key: string;
  readonly limit: number;
  /** Added when admitted: 1 for a request, the estimate for tokens. */
  readonly amount: number;
}

/** A counter of leases (requests in flight). */
export interface SlotCheck {
  readonly key: string;
  readonly limit: number;
}

export interface CounterRequest {
  readonly rates: readonly RateCheck[];
  readonly slots: readonly SlotCheck[];
  /** Names this request's leases (unique across processes). */
  readonly member: string;
  readonly windowMs: number;
  /** How long a lease lives unless renewed: a crashed relay's slots come back after it. */
  readonly leaseMs: number;
}

/** What each counter held before this request (for the `X-RateLimit-Remaining-*` headers). */
export interface CounterLevels {
  readonly rateUsed: readonly number[];
  readonly slotsHeld: readonly number[];
}

export type CounterResult =
  | (CounterLevels & { readonly ok: true; readonly bucket: number })
  | (CounterLevels & {
      readonly ok: false;
      /** The first counter without room. */
      readonly refused: { readonly type: 'rate' | 'slot'; readonly index: number };
      readonly retryAfterMs: number;
    });

export interface CounterStore {
  admit(request: CounterRequest): Promise<CounterResult>;
  /**
   * Corrects a rate counter by `delta` (real usage minus the estimate): in the admission's bucket while that is in
   * the window, else (only an increase) in the current one.
   */
  correct(
    keys: readonly string[],
    bucket: number,
    deltas: readonly number[],
    windowMs: number,
  ): Promise<void>;
  /** Ends a request's leases. */
  release(keys: readonly string[], member: string): Promise<void>;
  /** Extends a request's leases by `leaseMs` from now (a long stream keeps its slot). */
  renew(keys: readonly string[], member: string, leaseMs: number): Promise<void>;
}

/** The width of one bucket of a window. */
export const bucketMsOf = (windowMs: number): number => Math.max(1, Math.floor(windowMs / 60));

/**
 * Milliseconds until `amount` more fits under `limit`, given the window's buckets (oldest first), or the window
 * when it never can (the amount alone is over the limit).
 */
export function waitForRoom(
  buckets: readonly (readonly [number, number])[],
  used: number,
  amount: number,
  limit: number,
  now: number,
  windowMs: number,
): number {
  if (amount > limit) return windowMs;
  const bucketMs = bucketMsOf(windowMs);
  let left = used;
  for (const [bucket, value] of buckets) {
    left -= value;
    // The bucket stops overlapping the window when its end is at or before now - window.
    if (left + amount <= limit) return Math.max(1, (bucket + 1) * bucketMs + windowMs - now);
  }
  return windowMs;
}

/**
 * The counters of this process. At most `maxKeys` counters are kept (the least recently used forgotten first), so
 * memory stays bounded whatever the number of users, tokens and models.
 */
export function createMemoryCounterStore(
  settings: { maxKeys?: number; now?: () => number } = {},
): CounterStore & { readonly size: number } {
  const maxKeys = settings.maxKeys ?? 100_000;
  const now = settings.now ?? Date.now;
  const rates = new Map<string, Map<number, number>>();
  const slots = new Map<string, Map<string, number>>();

  function touch<V>(map: Map<string, V>, key: string, create: () => V): V {
    let value = map.get(key);
    if (value === undefined) value = create();
    else map.delete(key);
    map.set(key, value);
    if (map.size > maxKeys) map.delete(map.keys().next().value as string);
    return value;
  }

  /** The window's buckets, oldest first, with the ones that left it removed. */
  function bucketsOf(key: string, at: number, windowMs: number): [number, number][] {
    const counter = touch(rates, key, () => new Map<number, number>());
    const first = Math.floor((at - windowMs) / bucketMsOf(windowMs));
    const live: [number, number][] = [];
    for (const [bucket, value] of counter) {
      if (bucket < first) counter.delete(bucket);
      else live.push([bucket, value]);
    }
    return live.sort((a, b) => a[0] - b[0]);
  }

  function leasesOf(key: string, at: number): Map<string, number> {
    const leases = touch(slots, key, () => new Map<string, number>());
    for (const [member, expiresAt] of leases) if (expiresAt <= at) leases.delete(member);
    return leases;
  }

  return {
    get size() {
      return rates.size + slots.size;
    },
    async admit(request) {
      const at = now();
      const bucket = Math.floor(at / bucketMsOf(request.windowMs));
      const rateUsed: number[] = [];
      const slotsHeld: number[] = [];
      let refused: { type: 'rate' | 'slot'; index: number } | undefined;
      let retryAfterMs = 0;
      request.rates.forEach((check, index) => {
        const buckets = bucketsOf(check.key, at, request.windowMs);
        const used = buckets.reduce((sum, [, value]) => sum + value, 0);
        rateUsed.push(used);
        if (!refused && used + check.amount > check.limit) {
          refused = { type: 'rate', index };
          retryAfterMs = waitForRoom(buckets, used, check.amount, check.limit, at, request.windowMs);
        }
      });
      request.slots.forEach((check, index) => {
        const held = leasesOf(check.key, at).size;
        slotsHeld.push(held);
        if (!refused && held >= check.limit) {
          refused = { type: 'slot', index };
          retryAfterMs = 1000;
        }
      });
      if (refused) return { ok: false, refused, retryAfterMs, rateUsed, slotsHeld };
      for (const check of request.rates) {
        if (check.amount <= 0) continue;
        const counter = touch(rates, check.key, () => new Map<number, number>());
        counter.set(bucket, (counter.get(bucket) ?? 0) + check.amount);
      }
      for (const check of request.slots)
        touch(slots, check.key, () => new Map<string, number>()).set(request.member, at + request.leaseMs);
      return { ok: true, bucket, rateUsed, slotsHeld };
    },
    async correct(keys, bucket, deltas, windowMs) {
      const at = now();
      const first = Math.floor((at - windowMs) / bucketMsOf(windowMs));
      keys.forEach((key, index) => {
        const delta = deltas[index] ?? 0;
        const counter = rates.get(key);
        if (delta === 0 || !counter) return;
        if (bucket >= first && counter.has(bucket))
          counter.set(bucket, Math.max(0, (counter.get(bucket) ?? 0) + delta));
        else if (delta > 0) {
          const current = Math.floor(at / bucketMsOf(windowMs));
          counter.set(current, (counter.get(current) ?? 0) + delta);
        }
      });
    },
    async release(keys, member) {
      for (const key of keys) slots.get(key)?.delete(member);
    },
    async renew(keys, member, leaseMs) {
      const at = now();
      for (const key of keys) {
        const leases = slots.get(key);
        if (leases?.has(member)) leases.set(member, at + leaseMs);
      }
    },
  };
}
