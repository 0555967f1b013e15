/**
 * Channel cool-down (docs/adr/0008-channel-cool-down.md): `failures` counted failures of one channel within
 * `windowMs` suspend it for `cooldownMs`; it comes back by itself when the time is up. Nothing is written to the
 * database: the suspension lives in this process only, and the routing table asks {@link CooldownTracker.isCoolingDown}
 * at pick time.
 *
 * Memory per channel is bounded by `failures` timestamps while it is counting and one number while it rests.
 */

/** The `ChannelCooldown*` options, in milliseconds. */
export interface CooldownPolicy {
  /** Failures within the window that start a cool-down (≥ 1). */
  readonly failures: number;
  readonly windowMs: number;
  readonly cooldownMs: number;
}

export interface CooldownTracker {
  /**
   * Counts one failure of a channel; answers the end of the cool-down (epoch ms) when this failure starts one,
   * else undefined. Failures of a channel already resting are not counted (requests in flight when it was
   * suspended do not extend the rest).
   */
  recordFailure(channelId: number, policy: CooldownPolicy): number | undefined;
  /** Whether the channel is resting now. Hot path: one map lookup, and a clock read only when it rests. */
  isCoolingDown(channelId: number): boolean;
  /** When the rest of a channel ends (epoch ms), or undefined when it is not resting. */
  coolingUntil(channelId: number): number | undefined;
  /** Rests a channel until `until` (epoch ms) as another process decided; an earlier end never shortens a rest. */
  rest(channelId: number, until: number): void;
  /** Ends the rest and forgets the failures of one channel, or of every channel. */
  clear(channelId?: number): void;
  /** Drops finished rests and everything about channels that no longer exist; called on each channel reload. */
  prune(exists: (channelId: number) => boolean): void;
}

export function createCooldownTracker(options: { now?: () => number } = {}): CooldownTracker {
  // Read through `Date.now` at each call (not captured), so a test that moves the clock moves cool-downs too.
  const now = options.now ?? (() => Date.now());
  /** channel id → end of its rest (epoch ms). */
  const resting = new Map<number, number>();
  /** channel id → times of its recent failures, oldest first. */
  const recent = new Map<number, number[]>();

  function coolingUntil(channelId: number): number | undefined {
    const until = resting.get(channelId);
    if (until === undefined) return undefined;
    if (until > now()) return until;
    resting.delete(channelId);
    return undefined;
  }

  return {
    recordFailure(channelId, policy) {
      if (coolingUntil(channelId) !== undefined) return undefined;
      const at = now();
      const times = recent.get(channelId) ?? [];
      times.push(at);
      const oldest = at - policy.windowMs;
      let drop = 0;
      while (drop < times.length && (times[drop] as number) <= oldest) drop += 1;
      drop = Math.max(drop, times.length - policy.failures);
      if (drop > 0) times.splice(0, drop);
      if (times.length >= policy.failures) {
        recent.delete(channelId);
        const until = at + policy.cooldownMs;
        resting.set(channelId, until);
        return until;
      }
      recent.set(channelId, times);
      return undefined;
    },
    isCoolingDown: (channelId) => resting.size > 0 && coolingUntil(channelId) !== undefined,
    coolingUntil,
    rest(channelId, until) {
      if (until <= now() || (resting.get(channelId) ?? 0) >= until) return;
      resting.set(channelId, until);
      recent.delete(channelId);
    },
    clear(channelId) {
      if (channelId === undefined) {
        resting.clear();
        recent.clear();
        return;
      }
      resting.delete(channelId);
      recent.delete(channelId);
    },
    prune(exists) {
      const at = now();
      for (const [id, until] of resting) if (until <= at || !exists(id)) resting.delete(id);
      for (const id of recent.keys()) if (!exists(id)) recent.delete(id);
    },
  };
}

/**
 * Whether a failed attempt counts toward a cool-down: the upstream ones that say "busy or broken right now"
 * (429, 408, 5xx; transport failures arrive as 502/504), never a gateway-raised (local) error, and not the
 * 4xx answers about the request itself or the key (a revoked key is the automatic disable's business).
 */
export function countsTowardCooldown(error: { readonly status: number; readonly isLocal: boolean }): boolean {
  if (error.isLocal) return false;
  return error.status === 429 || error.status === 408 || error.status >= 500;
}
