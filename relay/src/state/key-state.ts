/**
 * The live state of the keys of multi-key channels in this process (docs/adr/0027): which key a call uses
 * (random, or round-robin per channel), which keys rest after a rate limit, and which were disabled here a moment
 * ago (before the database write and its `channels.changed` reload). Keys are named by fingerprint, never by
 * position (positions move when keys are added or removed) and never by the key itself.
 *
 * Rests are announced (`channels.cooldown` with the key's fingerprint) and applied by every process, like channel
 * cool-downs (ADR 0008); they live in memory and end by themselves. Memory: one number per resting key and one
 * counter per multi-key channel, dropped with the channel.
 */
import { KeyStatus, type MultiKeyModeValue } from '@turnpike/core/channels/multi-key';

/** One key of a channel as the request path holds it. */
export interface RelayKey {
  readonly index: number;
  readonly key: string;
  readonly fingerprint: string;
  /** The stored status (1 enabled, 2 disabled by hand, 3 disabled automatically). */
  readonly status: number;
}

export interface KeyStates {
  /** Whether this key may serve a call now: enabled, not disabled here, not resting. */
  isUsable(channelId: number, key: RelayKey): boolean;
  /**
   * The key for one call: `preferred` (a fingerprint a session is bound to) when usable, else one by the channel's
   * mode. Undefined when no key is usable.
   */
  choose(
    channelId: number,
    keys: readonly RelayKey[],
    mode: MultiKeyModeValue,
    preferred?: string,
  ): RelayKey | undefined;
  /** Rests a key until `until` (epoch ms); an earlier end never shortens a rest. */
  rest(channelId: number, fingerprint: string, until: number): void;
  restingUntil(channelId: number, fingerprint: string): number | undefined;
  /** Marks a key disabled in this process at once (the database write and its reload follow). */
  markDisabled(channelId: number, fingerprint: string): void;
  /**
   * After a reload: a key disabled here is forgotten once the stored row says so too (or it is gone, or ten
   * minutes passed without the write landing); rests and counters of vanished channels and keys go.
   */
  prune(
    storedStatus: (channelId: number, fingerprint: string) => number | undefined,
    channelExists: (channelId: number) => boolean,
  ): void;
}

export function createKeyStates(options: { now?: () => number; random?: () => number } = {}): KeyStates {
  const now = options.now ?? (() => Date.now());
  const random = options.random ?? Math.random;
  const resting = new Map<string, number>();
  /** `channel:fingerprint` → when this process disabled it. */
  const disabled = new Map<string, number>();
  const polling = new Map<number, number>();
  const id = (channelId: number, fingerprint: string) => `${channelId}:${fingerprint}`;

  function restingUntil(channelId: number, fingerprint: string): number | undefined {
    if (resting.size === 0) return undefined;
    const key = id(channelId, fingerprint);
    const until = resting.get(key);
    if (until === undefined) return undefined;
    if (until > now()) return until;
    resting.delete(key);
    return undefined;
  }

  const isUsable = (channelId: number, key: RelayKey): boolean =>
    key.status === KeyStatus.Enabled &&
    !(disabled.size > 0 && disabled.has(id(channelId, key.fingerprint))) &&
    restingUntil(channelId, key.fingerprint) === undefined;

  return {
    isUsable,
    choose(channelId, keys, mode, preferred) {
      if (preferred !== undefined) {
        const bound = keys.find((key) => key.fingerprint === preferred);
        if (bound && isUsable(channelId, bound)) return bound;
      }
      if (mode === 'polling') {
        // Round-robin over every key, skipping the unusable ones, so each usable key gets its turn in order.
        const start = polling.get(channelId) ?? 0;
        for (let step = 0; step < keys.length; step += 1) {
          const at = (start + step) % keys.length;
          const key = keys[at] as RelayKey;
          if (!isUsable(channelId, key)) continue;
          polling.set(channelId, (at + 1) % keys.length);
          return key;
        }
        return undefined;
      }
      const usable = keys.filter((key) => isUsable(channelId, key));
      return usable[Math.floor(random() * usable.length)];
    },
    rest(channelId, fingerprint, until) {
      const key = id(channelId, fingerprint);
      if (until <= now() || (resting.get(key) ?? 0) >= until) return;
      resting.set(key, until);
    },
    restingUntil,
    markDisabled(channelId, fingerprint) {
      disabled.set(id(channelId, fingerprint), now());
    },
    prune(storedStatus, channelExists) {
      const at = now();
      const split = (key: string) => {
        const colon = key.indexOf(':');
        return [Number(key.slice(0, colon)), key.slice(colon + 1)] as const;
      };
      for (const [key, since] of disabled) {
        const status = storedStatus(...split(key));
        if (status === undefined || status !== KeyStatus.Enabled || at - since > 600_000)
          disabled.delete(key);
      }
      for (const [key, until] of resting)
        if (until <= at || storedStatus(...split(key)) === undefined) resting.delete(key);
      for (const channelId of polling.keys()) if (!channelExists(channelId)) polling.delete(channelId);
    },
  };
}
